import Foundation
import Kafka
import KafkaTestSupport
import Patience
import Testing

/// Throughput into and out of the mock cluster, for comparing changes; off unless asked for:
/// `KAFKA_BENCHMARK=1 swift test -c release -Xswiftc -enable-testing --filter ThroughputBenchmark`.
/// The figures depend on the machine and its load: the mock broker, librdkafka's threads
/// and the measured loop share the same cores.
@Suite("Throughput benchmark", .onTestThreads, .enabled(if: ProcessInfo.processInfo.environment["KAFKA_BENCHMARK"] != nil, "set KAFKA_BENCHMARK=1 to run"))
struct ThroughputBenchmark {
    /// 1 M messages over 64 partitions stay under the mock's retention (about 5 MiB, roughly
    /// 23,000 messages of 200 bytes, per partition), so nothing is deleted before it is consumed.
    static let messages = 1_000_000
    static let partitions = 64


    @Test("producing and consuming a million 200-byte events through the mock cluster")
    func produceThenConsume() async throws {
        let cluster = try Fixtures.cluster(topic: "bench", partitions: Self.partitions)
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: Fixtures.logger)
        let event = Array(#"{"event_id":"01JD3Q6Z8W4N5V7K2M9P0R1S3T","type":"play","track_id":123456,"listener_id":987,"occurred_at":"2026-11-20T12:34:56.789Z","position_ms":0,"duration_ms":215000,"client":"ios","country":"DE"}"#.utf8)
        let value = event + [UInt8](repeating: 32, count: max(0, 200 - event.count))
        let keys = (0..<1_000).map { Array(String(100_000 + $0 * 37).utf8) }

        let produceStart = ContinuousClock.now
        try value.withUnsafeBytes { value in
            for index in 0..<Self.messages {
                try keys[index % keys.count].withUnsafeBytes { key in
                    _ = try producer.send(topic: "bench", key: key, value: value)
                }
            }
        }
        try producer.flush(timeout: .seconds(120))
        let produced = ContinuousClock.now - produceStart
        let statistics = producer.deliveryStatistics
        #expect(statistics.delivered == Self.messages)

        // Explicit start offsets, as the realtime processor hands back from its store: starting
        // at "earliest" costs a lookup that librdkafka may delay by its 500 ms retry backoff.
        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster, group: "bench", topic: "bench"), logger: Fixtures.logger)
        var starts: [KafkaPartition: Int64] = [:]
        var retained = 0
        for id in Int32(0)..<Int32(Self.partitions) {
            let watermarks = try consumer.queryWatermarks(topic: "bench", partition: id)
            starts[KafkaPartition(topic: "bench", id: id)] = watermarks.low ?? 0
            retained += Int(watermarks.high - (watermarks.low ?? 0))
        }
        #expect(retained == Self.messages, "the mock's retention deleted nothing")
        let expected = retained
        let handler = CountingHandler(starts: starts)
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.count >= expected }, orAfter: .seconds(120)))
        #expect(handler.count == retained)

        let consumed = try #require(handler.last) - #require(handler.first)
        print("""
            produce: \(Self.messages) messages of \(value.count) B into \(Self.partitions) partitions in \(produced): \
            \(rate(Self.messages, produced)) messages/s; delivery latency p50 \(statistics.latency.percentile(0.5)), \
            p99 \(statistics.latency.percentile(0.99)), max \(statistics.latency.maximum)
            consume: \(handler.count) messages (\(handler.bytes / 1_000_000) MB) in \(consumed) from the first message: \
            \(rate(handler.count, consumed)) messages/s
            """)
    }

    private func rate(_ count: Int, _ duration: Duration) -> Int {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return Int(Double(count) / seconds)
    }
}
