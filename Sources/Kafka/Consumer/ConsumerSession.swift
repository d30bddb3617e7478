import CRdKafka
import Logging

/// The state of one `KafkaConsumer.run`: the handler, where each partition should continue,
/// and the first failure. Lives on the polling thread only; librdkafka calls the rebalance
/// callback from inside the poll and close calls made there.
final class ConsumerSession {
    private let client: RDKafkaClient
    private let handler: any KafkaConsumerHandler
    private let defaultStart: Int64
    private let logger: Logger
    private var continuity = OffsetContinuity()
    private var resets: [KafkaOffsetReset] = []
    /// The first error; once set, the handler is not called again and the loop ends.
    private(set) var failure: (any Error)?
    /// Set before leaving the group, so the last revocation says why.
    var isClosing = false
    /// Rebalances served so far (librdkafka calls `rebalance` inside this thread's polls).
    private(set) var rebalancesServed = 0

    init(client: RDKafkaClient, handler: any KafkaConsumerHandler, autoOffsetReset: KafkaConsumerConfiguration.OffsetReset, logger: Logger) {
        self.client = client
        self.handler = handler
        self.defaultStart = autoOffsetReset == .earliest ? RDKafkaOffset.beginning : RDKafkaOffset.end
        self.logger = logger
    }

    func fail(_ error: any Error) {
        if failure == nil { failure = error }
    }

    func idle() {
        guard failure == nil else { return }
        do { try handler.idle() } catch { fail(error) }
    }

    /// Hands the messages to the handler, after taking out error events and checking offsets;
    /// destroys every message before returning. Returns how many were messages, not events.
    /// `firstOutdated`: the first was taken before a rebalance served since, which revoked its
    /// partition (every rebalance here is eager: it revokes all), so it is dropped unseen.
    @discardableResult
    func deliver(_ messages: UnsafeMutableBufferPointer<RDKafkaMessagePointer?>, firstOutdated: Bool = false) -> Int {
        var kept = 0
        defer {
            for message in messages[..<kept] { client.destroyMessage(message!) }
        }
        for index in messages.indices {
            let message = messages[index]!
            guard !message.isEvent else {
                handleEvent(message)
                client.destroyMessage(message)
                continue
            }
            if firstOutdated, index == messages.startIndex {
                logger.info("dropped a message taken before a rebalance revoked its partition; its next owner reads it", metadata: [
                    "kafka.partition": "\(message.topicName)/\(message.partition)", "kafka.offset": "\(message.offset)",
                ])
                client.destroyMessage(message)
                continue
            }
            if let reset = continuity.check(message.partitionKey, offset: message.offset, lowWatermark: lowWatermark) {
                resets.append(reset)
            }
            messages[kept] = message
            kept += 1
        }
        guard failure == nil else { return kept }
        do {
            if !resets.isEmpty {
                defer { resets.removeAll(keepingCapacity: true) }
                for reset in resets {
                    logger.warning(reset.wentBack
                                   ? "partition offsets went back: the broker's log ends before the expected offset"
                                   : "partition offsets jumped: the broker no longer has the expected offset", metadata: [
                        "kafka.partition": "\(reset.partition)", "kafka.expected_offset": "\(reset.expectedOffset)",
                        "kafka.resumed_offset": "\(reset.resumedOffset)", "kafka.skipped": "\(reset.skippedMessages)",
                    ])
                    try handler.offsetReset(reset)
                }
            }
            if kept > 0 {
                try handler.consume(KafkaMessageBatch(messages: UnsafeBufferPointer(rebasing: messages[..<kept])))
            }
        } catch {
            fail(error)
        }
        return kept
    }

    /// Records that a seek moved `partition`, so its next message is not taken for a reset.
    func seeked(_ partition: KafkaPartition, to offset: Int64) {
        continuity.expect(partition, at: offset)
    }

    /// Reacts to a rebalance: asks the handler, then assigns or unassigns (eager protocol).
    func rebalance(_ event: RDKafkaRebalance) {
        rebalancesServed += 1
        switch event {
        case .assign(let partitions):
            assign(partitions)
        case .revoke(let partitions, let lost):
            let reason: KafkaRevocationReason = isClosing ? .closing : (lost ? .lost : .rebalance)
            logger.info("partitions revoked", metadata: ["kafka.partitions": "\(partitions.sorted())", "kafka.reason": "\(reason)"])
            if failure == nil, !partitions.isEmpty {
                do { try handler.revoking(partitions, reason: reason) } catch { fail(error) }
            }
            unassign()
        case .failed(let error):
            logger.error("rebalance failed", metadata: ["kafka.error": "\(error)"])
            unassign()
        }
    }

    private func assign(_ partitions: [KafkaPartition]) {
        var starts: [KafkaPartition: Int64] = [:]
        if failure == nil, !partitions.isEmpty {
            do {
                starts = try handler.assigned(partitions).filter { partitions.contains($0.key) }
                if let negative = starts.first(where: { $0.value < 0 }) {
                    throw KafkaError.invalidArgument("start offset \(negative.value) is negative", context: "assigning \(negative.key)")
                }
            } catch {
                fail(error)
            }
        }
        guard failure == nil else { return unassign() }
        do {
            try client.assign(partitions.map { ($0, starts[$0] ?? defaultStart) })
            continuity.restart(with: starts)
            // An assignment is the group coordinator answering: a consumer with nothing new to
            // read learns that the cluster is back here rather than at its next probe.
            client.context.connection?.reachable()
            logger.info("partitions assigned", metadata: [
                "kafka.partitions": "\(partitions.sorted())",
                "kafka.start_offsets": "\(starts.sorted { $0.key < $1.key }.map { "\($0.key)@\($0.value)" })",
            ])
        } catch {
            fail(error)
        }
    }

    private func unassign() {
        continuity.restart(with: [:])
        do { try client.assign([]) } catch { fail(error) }
    }

    /// Consumer errors (a missing topic, a broker going away) are logged and librdkafka retries;
    /// only a fatal error stops the run.
    private func handleEvent(_ message: RDKafkaMessagePointer) {
        guard let error = message.eventError(context: "consuming") else { return }
        if error.isFatal {
            return fail(client.fatalClientError(purpose: "consuming") ?? error)
        }
        logger.warning("\(error.message)", metadata: ["kafka.error": "\(error.name)"])
        client.context.connection?.failed(rd_kafka_resp_err_t(rawValue: error.code), reason: error.message)
    }

    private func lowWatermark(_ partition: KafkaPartition) -> Int64? {
        guard let low = client.cachedWatermarks(partition)?.low, low >= 0 else { return nil }
        return low
    }
}
