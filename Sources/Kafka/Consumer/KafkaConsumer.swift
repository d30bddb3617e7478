#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CRdKafka
import Logging
import Runtime

/// A member of a consumer group that hands batches of borrowed messages to a handler.
///
/// - Threading: `run` is a blocking loop on the caller's thread (give it a dedicated `Thread`,
///   never a task on the cooperative pool). Every handler call, rebalances included, happens on
///   that thread, inside librdkafka's poll and close calls. Each poll waits up to `pollTimeout`
///   for one message, then takes whatever else is already queued (up to `maxPollRecords`)
///   without waiting: full batches under load, no added latency when traffic is light.
/// - Offsets are never committed to Kafka automatically: the handler's `assigned` says where
///   each partition starts, and the eager rebalance protocol calls `revoking` before any
///   partition moves. A caller that keeps its progress in Kafka instead (the archiver) calls
///   `commit` itself and returns `committedOffsets` from `assigned`.
/// - A batch never spans a rebalance: librdkafka serves rebalance callbacks inside the very
///   calls that take messages, so a message taken before one (of a partition it revoked) is
///   dropped rather than handed over after `revoking`; its partition's next owner reads it.
///   Progress kept outside Kafka stays exact (docs/architecture.md, the realtime layer).
/// - Offset resets: where a start offset is gone from the broker (retention) librdkafka resumes
///   at `autoOffsetReset` with only a log line. The consumer checks every message's offset
///   against the one expected next and calls the handler's `offsetReset` for jumps that the
///   broker's low watermark explains, so callers can report the gap loudly. A reset is noticed
///   when the first message after it arrives.
/// - An unreachable broker fails `init` within `connectTimeout` (a metadata request with a
///   deadline), because librdkafka itself connects lazily and retries forever; one that refuses
///   the client's TLS or credentials fails it at once. Brokers lost later are retried by
///   librdkafka, logged and reported to `healthReport`; only fatal errors end `run`.
public final class KafkaConsumer: Sendable {
    private enum Lifecycle {
        case ready
        case running(thread: ThreadIdentity, session: ConsumerSession)
        case closed
    }

    private let client: RDKafkaClient
    private let queue: RDKafkaQueue
    private let configuration: KafkaConsumerConfiguration
    private let lifecycle = Locked(Lifecycle.ready)
    /// Whether `wakeup` may still yield the queue: not once `run` has left its poll loop.
    private let wakeable = Locked(true)
    private let logger: Logger
    /// For tests: runs on the polling thread after a poll returned a message and before the
    /// rest of the batch is drained, so that a test can make a rebalance arrive there.
    private let afterFirstMessage: (@Sendable () -> Void)?

    /// Creates the client and, unless `connectTimeout` is nil, checks that a broker answers.
    public convenience init(configuration: KafkaConsumerConfiguration, logger: Logger) throws(KafkaError) {
        try self.init(configuration: configuration, logger: logger, afterFirstMessage: nil)
    }

    /// `afterFirstMessage`, for tests: see the property.
    package init(configuration: KafkaConsumerConfiguration, logger: Logger, afterFirstMessage: (@Sendable () -> Void)?) throws(KafkaError) {
        let purpose = "creating consumer for group \(configuration.groupID) at \(configuration.bootstrapServers)"
        guard !configuration.topics.isEmpty else {
            throw KafkaError.invalidArgument("no topics to consume", context: purpose)
        }
        guard configuration.maxPollRecords > 0 else {
            throw KafkaError.invalidArgument("maxPollRecords must be positive", context: purpose)
        }
        let client = try RDKafkaClient(
            kind: .consumer, properties: configuration.librdkafkaProperties, fixed: configuration.fixedProperties,
            context: RDKafkaClientContext(logger: logger, healthReport: configuration.healthReport, cluster: configuration.embeddedCluster),
            purpose: purpose)
        if let timeout = configuration.connectTimeout {
            try client.verifyBrokerReachable(within: timeout, servers: configuration.bootstrapServers, purpose: purpose)
        }
        try client.routeEventsToConsumerQueue(purpose: purpose)
        self.client = client
        self.queue = RDKafkaQueue(consumerQueueOf: client)
        self.configuration = configuration
        self.logger = logger
        self.afterFirstMessage = afterFirstMessage
    }

    /// Joins the group and consumes until `stop` is requested (which wakes a waiting poll at
    /// once) or the handler throws; then leaves the group as `run(until:handler:)` does.
    public func run(until stop: StopSignal, handler: some KafkaConsumerHandler) throws {
        stop.onRequest { [weak self] in self?.wakeup() }
        try run(until: { stop.isRequested }, handler: handler)
    }

    /// Joins the group and consumes until `shouldStop` returns true (checked after every poll;
    /// call `wakeup` to make a waiting poll return at once) or the handler throws. Then leaves
    /// the group, which revokes the partitions (`revoking` with reason `.closing`), and returns.
    /// A consumer runs once: after `run` returns it is closed.
    public func run(until shouldStop: () -> Bool, handler: some KafkaConsumerHandler) throws {
        let session = ConsumerSession(client: client, handler: handler, autoOffsetReset: configuration.autoOffsetReset, logger: logger)
        try lifecycle.withLock { (state) throws(KafkaError) in
            guard case .ready = state else {
                throw KafkaError.wrongState("a consumer runs only once", context: "running consumer")
            }
            state = .running(thread: .current, session: session)
        }
        client.context.rebalance = { session.rebalance($0) }
        defer {
            client.context.rebalance = nil
            lifecycle.withLock { $0 = .closed }
        }

        do {
            try client.subscribe(to: configuration.topics)
            logger.info("consumer joining group", metadata: ["kafka.group": "\(configuration.groupID)", "kafka.topics": "\(configuration.topics)"])
        } catch {
            session.fail(error)
        }
        pollUntil(shouldStop, session: session)

        // librdkafka's close waits on the queue that the consumer queue is forwarded to: a
        // wakeup from now on would cut that wait short and fail the close.
        wakeable.set(false)
        session.isClosing = true
        let closed = Result { () throws(KafkaError) in try client.closeConsumer() }
        logger.info("consumer left group", metadata: ["kafka.group": "\(configuration.groupID)"])
        if let failure = session.failure { throw failure }
        try closed.get()
    }

    private func pollUntil(_ shouldStop: () -> Bool, session: ConsumerSession) {
        let buffer = UnsafeMutableBufferPointer<RDKafkaMessagePointer?>.allocate(capacity: configuration.maxPollRecords)
        defer { buffer.deallocate() }
        while session.failure == nil, !shouldStop() {
            // Block for the first message only, then take whatever else is already queued: a full
            // batch under load, no waiting for one when traffic is light.
            guard let first = client.consumerPoll(timeout: configuration.pollTimeout) else {
                // The probe first: a handler's `idle` may block on the cluster (an offset commit
                // waits up to its timeout for a coordinator while every broker is down), and the
                // health must say so meanwhile. A probe waits at most
                // `probeTimeout`, only when the cluster does not answer.
                if let watch = client.context.connection, watch.probeDue() {
                    watch.probed(client.askForMetadata(timeout: KafkaConnectionWatch.probeTimeout))
                }
                session.idle()
                continue
            }
            buffer[0] = first
            let rebalances = session.rebalancesServed
            afterFirstMessage?()
            let count = 1 + client.drain(queue, into: UnsafeMutableBufferPointer(rebasing: buffer[1...]))
            // The drain serves a rebalance that comes in meanwhile (the handler is told inside
            // it), and librdkafka drops the messages it drained of partitions that rebalance
            // moved; but `first` came out of the call before, where nothing can drop it.
            let firstOutdated = session.rebalancesServed != rebalances
            if session.deliver(UnsafeMutableBufferPointer(rebasing: buffer[..<count]), firstOutdated: firstOutdated) > 0 {
                client.context.connection?.reachable()
            }
        }
    }

    /// Makes a waiting poll in `run` return promptly (the handler's `idle` runs, then
    /// `shouldStop` is checked); if no poll is waiting, the next one that finds nothing
    /// returns at once. Does nothing once `run` is closing the consumer. Any thread.
    public func wakeup() {
        wakeable.withLock { if $0 { queue.yield() } }
    }

    /// Moves an assigned partition so that its next message is `offset`. Only from inside a
    /// handler call; messages of that partition still in the current batch should be ignored.
    public func seek(partition: KafkaPartition, to offset: Int64, timeout: Duration = .seconds(10)) throws(KafkaError) {
        let session = lifecycle.withLock { state -> ConsumerSession? in
            guard case .running(let thread, let session) = state, thread == .current else { return nil }
            return session
        }
        guard let session else {
            throw KafkaError.wrongState("seek is only possible from a handler call inside run", context: "seeking \(partition) to offset \(offset)")
        }
        try client.seek(partition, to: offset, timeout: timeout)
        session.seeked(partition, to: offset)
    }

    /// Commits `offsets` — for each partition the offset of the next message to read, i.e. the
    /// last one processed plus one — as the group's committed offsets, and waits for the broker
    /// to confirm. Meant for handler calls inside `run` (`revoking` included, which is the last
    /// chance before a partition moves); it fails if the group has moved on since (a lost
    /// assignment answers `ILLEGAL_GENERATION` or `UNKNOWN_MEMBER_ID`). Without an answer
    /// within `timeout` it throws a retriable `_TIMED_OUT` error, so that a commit made while the
    /// cluster is unreachable holds up the poll loop for no longer than that.
    public func commit(_ offsets: [KafkaPartition: Int64], timeout: Duration = .seconds(10)) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        if let negative = offsets.first(where: { $0.value < 0 }) {
            throw KafkaError.invalidArgument("offset \(negative.value) is negative", context: "committing the offset of \(negative.key)")
        }
        try client.commit(offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, timeout: timeout)
        // A commit the broker confirmed is the cluster answering.
        client.context.connection?.reachable()
    }

    /// The offsets the group last committed for `partitions`, asked of the group coordinator
    /// (blocking up to `timeout`); partitions without a committed offset are left out. Returning
    /// this from `assigned` resumes each partition where the group left it, and the others
    /// where `autoOffsetReset` says. Any thread.
    public func committedOffsets(for partitions: [KafkaPartition], timeout: Duration = .seconds(10)) throws(KafkaError) -> [KafkaPartition: Int64] {
        guard !partitions.isEmpty else { return [:] }
        var committed: [KafkaPartition: Int64] = [:]
        for (partition, offset) in try client.committed(partitions, timeout: timeout) where offset >= 0 {
            committed[partition] = offset
        }
        return committed
    }

    /// The partition's offsets as of the last fetch response, without asking the broker; nil
    /// before anything was fetched. Any thread. `low` is nil when librdkafka has not learnt it.
    public func watermarks(topic: String, partition: Int32) -> KafkaWatermarks? {
        guard let (low, high) = client.cachedWatermarks(KafkaPartition(topic: topic, id: partition)), high >= 0 else { return nil }
        return KafkaWatermarks(low: low >= 0 ? low : nil, high: high)
    }

    /// Asks the partition's leader for its offsets, blocking up to `timeout`. Any thread.
    public func queryWatermarks(topic: String, partition: Int32, timeout: Duration = .seconds(10)) throws(KafkaError) -> KafkaWatermarks {
        let (low, high) = try client.queryWatermarks(KafkaPartition(topic: topic, id: partition), timeout: timeout)
        return KafkaWatermarks(low: low, high: high)
    }
}

/// The range of offsets a partition holds: `low` is the oldest retained, `high` the next to be written.
public struct KafkaWatermarks: Sendable, Equatable {
    public var low: Int64?
    public var high: Int64
}
