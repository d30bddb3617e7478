import Kafka
import KafkaTestSupport
import Patience
import Runtime
import Testing

@Suite("Committing offsets to Kafka", .onTestThreads)
struct CommitTests {
    /// Commits every batch's next offsets from inside the handler, as the archiver does.
    final class CommittingHandler: KafkaConsumerHandler, Sendable {
        let consumer: KafkaConsumer
        let messages = Locked<[ReceivedMessage]>([])
        let assignedStarts = Locked<[KafkaPartition: Int64]>([:])
        /// Commits only while fewer than this many messages have been consumed.
        let commitLimit: Int

        init(consumer: KafkaConsumer, commitLimit: Int = .max) {
            self.consumer = consumer
            self.commitLimit = commitLimit
        }

        func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
            let committed = try consumer.committedOffsets(for: partitions)
            assignedStarts.withLock { $0.merge(committed) { $1 } }
            return committed
        }

        func consume(_ batch: KafkaMessageBatch) throws {
            var next: [KafkaPartition: Int64] = [:]
            var copies: [ReceivedMessage] = []
            for message in batch {
                guard messages.withLock({ $0.count }) + copies.count < commitLimit else { break }
                copies.append(ReceivedMessage(partition: message.partition, offset: message.offset, key: nil, value: message.value.map { Array($0) }))
                next[KafkaPartition(topic: "plays", id: message.partition)] = message.offset + 1
            }
            try consumer.commit(next)
            messages.withLock { $0.append(contentsOf: copies) }
        }
    }

    @Test("a consumer that returns the committed offsets on assignment resumes after the last commit of its group")
    func resumesAfterCommit() async throws {
        let cluster = try Fixtures.cluster(partitions: 2)
        try Fixtures.produce(300, to: cluster)
        let configuration = Fixtures.consumerConfiguration(cluster, group: "archivers")

        let first = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        let firstHandler = CommittingHandler(consumer: first, commitLimit: 120)
        try await Fixtures.run(first, handler: firstHandler, until: Fixtures.stop(when: { firstHandler.messages.withLock { $0.count >= 120 } }))
        let firstSeen = firstHandler.messages.value
        #expect(firstSeen.count == 120)
        #expect(firstHandler.assignedStarts.value.isEmpty, "a new group has nothing committed")

        let second = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        let committed = try second.committedOffsets(for: [0, 1].map { KafkaPartition(topic: "plays", id: $0) })
        var expected: [KafkaPartition: Int64] = [:]
        for message in firstSeen {
            expected[KafkaPartition(topic: "plays", id: message.partition)] = max(expected[KafkaPartition(topic: "plays", id: message.partition)] ?? 0, message.offset + 1)
        }
        #expect(committed == expected)

        let secondHandler = CommittingHandler(consumer: second)
        try await Fixtures.run(second, handler: secondHandler, until: Fixtures.stop(when: { secondHandler.messages.withLock { $0.count >= 180 } }))
        let secondSeen = secondHandler.messages.value
        #expect(secondHandler.assignedStarts.value == expected)
        // Together the two saw every message exactly once: the second began where the first committed.
        let values = (firstSeen + secondSeen).map { $0.value! }
        #expect(values.count == 300)
        #expect(Set(values) == Set((0..<300).map { Array("v\($0)".utf8) }))
    }

    @Test("committing from the revocation while leaving the group is kept")
    func commitWhileClosing() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        try Fixtures.produce(50, to: cluster)
        let configuration = Fixtures.consumerConfiguration(cluster, group: "closing")
        let partition = KafkaPartition(topic: "plays", id: 0)

        final class CommitOnRevoke: KafkaConsumerHandler, Sendable {
            let consumer: KafkaConsumer
            let next = Locked<[KafkaPartition: Int64]>([:])
            init(consumer: KafkaConsumer) { self.consumer = consumer }
            func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] { [:] }
            func consume(_ batch: KafkaMessageBatch) throws {
                next.withLock { next in
                    for message in batch { next[KafkaPartition(topic: "plays", id: message.partition)] = message.offset + 1 }
                }
            }
            func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws {
                try consumer.commit(next.value)
            }
        }
        let consumer = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        let handler = CommitOnRevoke(consumer: consumer)
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.next.value[partition] == 50 }))

        let probe = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        #expect(try probe.committedOffsets(for: [partition]) == [partition: 50])
    }

    @Test("a negative offset is refused before librdkafka sees it")
    func negativeOffsetRefused() throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        #expect(throws: KafkaError.self) { try consumer.commit([KafkaPartition(topic: "plays", id: 0): -1]) }
    }
}
