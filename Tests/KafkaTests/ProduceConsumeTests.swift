import Kafka
import Patience
import Runtime
import Testing

@Suite("Producing to and consuming from the mock cluster", .onTestThreads)
struct ProduceConsumeTests {
    @Test("messages produced with KafkaProducer arrive once each with their partition, offset, key and value")
    func roundTrip() async throws {
        let cluster = try Fixtures.cluster(partitions: 3)
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: Fixtures.logger)
        let sent = (0..<3_000).map { (key: Array("k\($0)".utf8), value: Array("v\($0)".utf8)) }
        for message in sent {
            try producer.send(topic: "plays", key: message.key, value: message.value)
        }
        try producer.flush(timeout: .seconds(10))

        let statistics = producer.deliveryStatistics
        #expect(statistics.enqueued == 3_000)
        #expect(statistics.delivered == 3_000)
        #expect(statistics.failed == 0)
        #expect(statistics.latency.count == 3_000)
        #expect(statistics.latency.percentile(0.5) <= statistics.latency.maximum)

        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        let handler = RecordingHandler()
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.count >= 3_000 }))

        let received = handler.messages.value
        #expect(received.count == 3_000)
        #expect(Set(received.map { [$0.key!, $0.value!] }) == Set(sent.map { [$0.key, $0.value] }))
        for partition in Int32(0)..<3 {
            let offsets = received.filter { $0.partition == partition }.map(\.offset)
            #expect(offsets == Array(0..<Int64(offsets.count)), "partition \(partition) arrives in offset order without gaps")
        }
        let partitions = (Int32(0)..<3).map { KafkaPartition(topic: "plays", id: $0) }
        #expect(handler.events.value == [.assigned(partitions), .revoking(partitions, .closing)])
        #expect(handler.resets.value.isEmpty)
    }

    @Test("the start offsets returned from assigned are honoured")
    func startOffsets() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        try Fixtures.produce(1_000, to: cluster)
        let partition = KafkaPartition(topic: "plays", id: 0)

        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        let handler = RecordingHandler(startOffsets: [partition: 500])
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.count >= 500 }))

        let received = handler.messages.value
        #expect(received.map(\.offset) == Array(500..<1_000))
        #expect(received.first?.value == Array("v500".utf8))
        #expect(handler.resets.value.isEmpty)
    }

    @Test("tombstones, empty values, large values and producer timestamps arrive as such")
    func specialValues() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: Fixtures.logger)
        let large = (0..<900_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try producer.send(topic: "plays", key: Array("gone".utf8), value: nil, timestampMilliseconds: 1_795_000_000_123)
        try producer.send(topic: "plays", key: nil, value: [])
        try producer.send(topic: "plays", key: Array("big".utf8), value: large)
        try producer.flush(timeout: .seconds(10))

        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        let handler = RecordingHandler()
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.count >= 3 }))

        let received = handler.messages.value
        try #require(received.count == 3)
        #expect(received[0].key == Array("gone".utf8))
        #expect(received[0].value == nil)
        #expect(received[1].key == nil)
        #expect(received[1].value == [])
        #expect(received[2].value == large)
        #expect(handler.timestamps.value.first == 1_795_000_000_123)
    }

    @Test("watermarks report the partition's offsets, cached after fetching and on request")
    func watermarks() async throws {
        let cluster = try Fixtures.cluster(partitions: 2)
        try Fixtures.produce(200, to: cluster)
        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        let queried = try (Int32(0)..<2).map { try consumer.queryWatermarks(topic: "plays", partition: $0) }
        #expect(queried.map(\.low) == [0, 0])
        #expect(queried.map(\.high).reduce(0, +) == 200)

        let handler = RecordingHandler()
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.count >= 200 }))
        let cached = (Int32(0)..<2).map { consumer.watermarks(topic: "plays", partition: $0) }
        #expect(cached.map { $0?.high } == queried.map(\.high))
    }
}
