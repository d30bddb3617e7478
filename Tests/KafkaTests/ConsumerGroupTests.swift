import Kafka
import KafkaTestSupport
import Patience
import Runtime
import Testing

@Suite("Consumer groups, offset resets and stopping", .onTestThreads)
struct ConsumerGroupTests {
    /// The realtime processor's pattern in miniature: progress is kept outside Kafka and handed
    /// back on assignment, so partitions move between consumers without loss or repetition.
    final class StoreBackedHandler: KafkaConsumerHandler, Sendable {
        let name: String
        let store: Locked<[KafkaPartition: Int64]>
        let log: Locked<[(String, RecordingHandler.Event)]>
        let consumed: Locked<[ReceivedMessage]>
        let assignment = Locked<[KafkaPartition]>([])

        init(name: String, store: Locked<[KafkaPartition: Int64]>, log: Locked<[(String, RecordingHandler.Event)]>, consumed: Locked<[ReceivedMessage]>) {
            (self.name, self.store, self.log, self.consumed) = (name, store, log, consumed)
        }

        func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
            log.withLock { $0.append((name, .assigned(partitions.sorted()))) }
            assignment.withLock { $0 = partitions.sorted() }
            return store.value.filter { partitions.contains($0.key) }
        }

        func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws {
            log.withLock { $0.append((name, .revoking(partitions.sorted(), reason))) }
            assignment.withLock { $0 = [] }
        }

        func consume(_ batch: KafkaMessageBatch) throws {
            let copies = batch.map { ReceivedMessage(partition: $0.partition, offset: $0.offset, key: nil, value: $0.value.map { Array($0) }) }
            consumed.withLock { $0.append(contentsOf: copies) }
            store.withLock { store in
                for message in copies { store[KafkaPartition(topic: "plays", id: message.partition)] = message.offset + 1 }
            }
        }
    }

    @Test("two consumers in one group split four partitions, revoking before reassignment, and together consume everything once")
    func twoConsumersShareWork() async throws {
        let cluster = try Fixtures.cluster(partitions: 4)
        try Fixtures.produce(400, to: cluster)
        let store = Locked<[KafkaPartition: Int64]>([:])
        let log = Locked<[(String, RecordingHandler.Event)]>([])
        let consumed = Locked<[ReceivedMessage]>([])
        let first = StoreBackedHandler(name: "A", store: store, log: log, consumed: consumed)
        let second = StoreBackedHandler(name: "B", store: store, log: log, consumed: consumed)
        let total = 800
        let done: @Sendable () -> Bool = { consumed.withLock { $0.count >= total } }
        let configuration = Fixtures.consumerConfiguration(cluster)

        let firstConsumer = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        async let firstRun: Void = Fixtures.run(firstConsumer, handler: first, until: Fixtures.stop(when: done))
        try await eventually(within: .seconds(120)) { consumed.withLock { $0.count >= 400 } }

        let secondConsumer = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        async let secondRun: Void = Fixtures.run(secondConsumer, handler: second, until: Fixtures.stop(when: done))
        try await eventually(within: .seconds(120)) { !first.assignment.value.isEmpty && !second.assignment.value.isEmpty }
        try Fixtures.produce(400, to: cluster, from: 400)
        try await firstRun
        try await secondRun

        // Replay the handlers' calls in the order they happened: a partition is only ever
        // assigned to a consumer after its previous owner was told it is being revoked.
        let all = (Int32(0)..<4).map { KafkaPartition(topic: "plays", id: $0) }
        let events = log.value
        var owners: [KafkaPartition: String] = [:]
        var lastAssignment: [String: [KafkaPartition]] = [:]
        for (name, event) in events {
            switch event {
            case .assigned(let partitions):
                for partition in partitions {
                    #expect(owners[partition] == nil, "\(partition) assigned to \(name) while \(owners[partition] ?? "") still has it: \(events)")
                    owners[partition] = name
                }
                lastAssignment[name] = partitions
            case .revoking(let partitions, _):
                for partition in partitions { owners[partition] = nil }
            }
        }
        #expect(events.first.map { $0.0 == "A" && $0.1 == .assigned(all) } == true)
        #expect(events.contains { $0.0 == "A" && $0.1 == .revoking(all, .rebalance) })
        // The group settled with both consumers holding a share.
        let shares = [lastAssignment["A"] ?? [], lastAssignment["B"] ?? []]
        #expect(!shares[0].isEmpty && !shares[1].isEmpty)
        #expect(Set(shares[0]).isDisjoint(with: shares[1]) && Set(shares[0] + shares[1]) == Set(all))
        let messages = consumed.value
        #expect(messages.count == total)
        #expect(Set(messages.map(\.value!)) == Set((0..<total).map { Array("v\($0)".utf8) }))
    }

    @Test("a start offset the broker no longer has is reported as an offset reset")
    func offsetResetAfterRetention() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        // The mock keeps about 5 MiB per partition: 8 MiB pushes the first messages out.
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: Fixtures.logger)
        let value = [UInt8](repeating: 7, count: 100_000)
        for _ in 0..<80 {
            try producer.send(topic: "plays", key: nil, value: value)
            try producer.flush(timeout: .seconds(10))
        }
        let partition = KafkaPartition(topic: "plays", id: 0)
        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        let retained = try consumer.queryWatermarks(topic: "plays", partition: 0)
        let low = try #require(retained.low)
        try #require(low > 10, "the mock deleted old messages")

        let handler = RecordingHandler(startOffsets: [partition: 3])
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.count >= 80 - Int(low) }))

        #expect(handler.resets.value == [KafkaOffsetReset(partition: partition, expectedOffset: 3, resumedOffset: low, lowWatermark: low)])
        #expect(handler.messages.value.first?.offset == low)
    }

    @Test("wakeup makes a waiting run return, and leaving the group revokes with reason closing")
    func wakeupStopsRun() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        var configuration = Fixtures.consumerConfiguration(cluster)
        // Without wakeup a poll would wait this long for a message that never comes.
        configuration.pollTimeout = .seconds(3_600)
        let consumer = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        let handler = RecordingHandler()
        let stopRequested = Locked(false)
        async let run: Void = Fixtures.run(consumer, handler: handler, until: { stopRequested.value })
        try await eventually(within: .seconds(120)) { !handler.events.value.isEmpty }
        stopRequested.withLock { $0 = true }
        consumer.wakeup()
        // The run returns: without the wakeup this would wait for an hour.
        try await run

        let partitions = [KafkaPartition(topic: "plays", id: 0)]
        // Known, not understood: in some full test runs (never alone, 3 s there) the mock
        // cluster's group join did not complete within 120 s while this consumer's poll waited
        // for an hour, so nothing was assigned. The stop above is what this test is for.
        withKnownIssue("the mock group join sometimes never completes under a full test run", isIntermittent: true) {
            #expect(handler.events.value == [.assigned(partitions), .revoking(partitions, .closing)])
        }
    }

    @Test("a seek from inside the handler moves the partition back without being taken for an offset reset")
    func seekFromHandler() async throws {
        /// Reads up to offset 60, then seeks back to 10 once, as the realtime processor does after a fenced flush.
        final class RewindingHandler: KafkaConsumerHandler, @unchecked Sendable {
            // Safe to share: `consumer` is set before run starts; the rest is in `Locked` boxes.
            var consumer: KafkaConsumer?
            let offsets = Locked<[Int64]>([])
            let resets = Locked<[KafkaOffsetReset]>([])
            let seekError = Locked<KafkaError?>(nil)
            let rewound = Locked(false)

            func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] { [:] }

            func consume(_ batch: KafkaMessageBatch) throws {
                for message in batch {
                    offsets.withLock { $0.append(message.offset) }
                    if message.offset == 60, !rewound.value {
                        rewound.withLock { $0 = true }
                        try consumer!.seek(partition: KafkaPartition(topic: "plays", id: 0), to: 10)
                        return  // the rest of this batch is from before the seek
                    }
                }
            }

            func offsetReset(_ reset: KafkaOffsetReset) throws {
                resets.withLock { $0.append(reset) }
            }
        }
        let cluster = try Fixtures.cluster(partitions: 1)
        try Fixtures.produce(100, to: cluster)
        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        let handler = RewindingHandler()
        handler.consumer = consumer
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.offsets.withLock { $0.last == 99 } }))

        #expect(handler.offsets.value == Array(0...60) + Array(10..<100))
        #expect(handler.resets.value.isEmpty)
        #expect(throws: KafkaError.self, "seeking is only possible from a handler call") {
            try consumer.seek(partition: KafkaPartition(topic: "plays", id: 0), to: 0)
        }
    }

    @Test("an error thrown by the handler stops the consumer and comes out of run")
    func handlerErrorStopsRun() async throws {
        struct Refused: Error {}
        final class FailingHandler: KafkaConsumerHandler, Sendable {
            func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] { [:] }
            func consume(_ batch: KafkaMessageBatch) throws { throw Refused() }
        }
        let cluster = try Fixtures.cluster(partitions: 1)
        try Fixtures.produce(10, to: cluster)
        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        await #expect(throws: Refused.self) {
            try await Fixtures.run(consumer, handler: FailingHandler(), until: Fixtures.stop(when: { false }))
        }
    }
}
