import Kafka
import KafkaTestSupport
import Patience
import Runtime
import Testing

@Suite("Messages and rebalances", .onTestThreads)
struct RebalanceDeliveryTests {
    /// Keeps its progress outside Kafka, as the realtime processor does: only for the partitions
    /// it holds, since another member may read them next.
    final class OwningHandler: KafkaConsumerHandler, Sendable {
        let name: String
        let store: Locked<[KafkaPartition: Int64]>
        let consumed: Locked<[(String, ReceivedMessage)]>
        let assignment = Locked<[KafkaPartition]>([])
        /// Messages handed over for partitions this consumer did not hold.
        let unheld = Locked<[ReceivedMessage]>([])
        let revocations = Locked(0)

        init(name: String, store: Locked<[KafkaPartition: Int64]>, consumed: Locked<[(String, ReceivedMessage)]>) {
            (self.name, self.store, self.consumed) = (name, store, consumed)
        }

        func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
            assignment.withLock { $0 = partitions }
            return store.value.filter { partitions.contains($0.key) }
        }

        func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws {
            assignment.withLock { $0 = [] }
            revocations.withLock { $0 += 1 }
        }

        func consume(_ batch: KafkaMessageBatch) throws {
            let held = Set(assignment.value.map(\.id))
            for message in batch {
                let copy = ReceivedMessage(partition: message.partition, offset: message.offset, key: nil, value: message.value.map { Array($0) })
                consumed.withLock { $0.append((name, copy)) }
                guard held.contains(copy.partition) else {
                    unheld.withLock { $0.append(copy) }
                    continue
                }
                store.withLock { $0[KafkaPartition(topic: "plays", id: copy.partition)] = copy.offset + 1 }
            }
        }
    }

    @Test("a message taken just before a rebalance revokes its partition is not handed over after the revocation, so the group consumes it once")
    func noMessageAfterRevocation() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        try Fixtures.produce(10, to: cluster)
        let store = Locked<[KafkaPartition: Int64]>([:])
        let consumed = Locked<[(String, ReceivedMessage)]>([])
        let first = OwningHandler(name: "A", store: store, consumed: consumed)
        let second = OwningHandler(name: "B", store: store, consumed: consumed)
        let done: @Sendable () -> Bool = { store.value[KafkaPartition(topic: "plays", id: 0)] == 11 && first.revocations.value > 0 }

        var firstConfiguration = Fixtures.consumerConfiguration(cluster)
        firstConfiguration.options = KafkaClientOptions(PollWindow.debugOptions)
        let window = PollWindow()
        let firstConsumer = try KafkaConsumer(configuration: firstConfiguration, logger: window.logger(label: "first"), afterFirstMessage: { window.pass() })
        async let firstRun: Void = Fixtures.run(firstConsumer, handler: first, until: Fixtures.stop(when: done))
        try await eventually(within: .seconds(120)) { store.value[KafkaPartition(topic: "plays", id: 0)] == 10 }

        // The first consumer takes offset 10 and is held there while a second member joins.
        window.arm()
        try Fixtures.produce(1, to: cluster, from: 10)
        try await eventually(within: .seconds(120)) { window.isHolding }
        let secondConsumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        async let secondRun: Void = Fixtures.run(secondConsumer, handler: second, until: Fixtures.stop(when: done))
        try await eventually(within: .seconds(120)) { window.revocationIsQueued }
        await window.release()
        try await firstRun
        try await secondRun

        #expect(window.isHolding && window.revocationIsQueued, "the consumer was not held while a revocation was queued")
        #expect(first.unheld.value.isEmpty, "handed over after its partition was revoked: \(first.unheld.value.map(\.offset))")
        let offsets = consumed.value.map(\.1.offset)
        #expect(offsets.sorted() == Array(0...10), "consumed: \(consumed.value.map { "\($0.0)@\($0.1.offset)" })")
    }
}
