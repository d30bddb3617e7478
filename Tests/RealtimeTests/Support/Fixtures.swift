import CounterpointCore
import CounterStore
import Foundation
import Generator
import Kafka
import Logging
import Patience
import Realtime
import Runtime
import Scratch
import StoreTestSupport

/// A (track, hour) counter key, as the tests compare them.
struct CountKey: Hashable, Sendable, CustomStringConvertible {
    var trackID: Int64
    var hour: Int64

    var description: String { "\(trackID)@\(hour)" }
}

/// Produced events and what they must add up to.
struct ProducedEvents: Sendable {
    var values: [[UInt8]] = []
    var truth: [CountKey: Int64] = [:]

    mutating func append(_ other: ProducedEvents) {
        values += other.values
        truth.merge(other.truth, uniquingKeysWith: +)
    }
}

enum Fixtures {
    /// True under `scripts/drill` (COUNTERPOINT_LONG_DRILL=1): the drills run their long versions,
    /// `scripts/test` their short ones.
    static var isLongDrill: Bool { ProcessInfo.processInfo.environment["COUNTERPOINT_LONG_DRILL"] == "1" }

    /// Quiet by default: librdkafka's connection chatter would drown test output.
    static let logger = Logger(label: "realtime-tests") { _ in SwiftLogNoOpLogHandler() }

    static func cluster(topic: String = "plays", partitions: Int) throws -> KafkaMockCluster {
        let cluster = try KafkaMockCluster(logger: logger)
        try cluster.createTopic(topic, partitions: partitions)
        return cluster
    }

    /// Fast heartbeats and a short flush interval, so that rebalances and flushes happen
    /// within a test's patience.
    static func configuration(_ cluster: KafkaMockCluster, store: StoreBackend) -> RealtimeConfiguration {
        var configuration = RealtimeConfiguration(bootstrapServers: cluster.bootstrapServers, store: store)
        configuration.flushInterval = .milliseconds(50)
        configuration.sessionTimeoutMilliseconds = 6_000
        configuration.heartbeatIntervalMilliseconds = 500
        configuration.connectTimeout = .seconds(5)
        configuration.kafkaOptions.set("max.poll.interval.ms", String(KafkaMockCluster.consumerMaxPollIntervalMilliseconds))
        return configuration
    }

    /// `count` valid, duplicate-free play events over `tracks` tracks and `hours` hours; `seed`
    /// (and `stream`) tell independent sets apart.
    static func events(_ count: Int, tracks: Int = 500, hours: Int = 6, seed: UInt64 = 1, stream: UInt16 = 0) -> ProducedEvents {
        var configuration = GeneratorConfiguration()
        configuration.events = count
        configuration.tracks = tracks
        configuration.hours = hours
        configuration.start = Hour(epochSeconds: 1_795_000_000)
        configuration.seed = seed
        var synthesizer = EventSynthesizer(configuration: configuration, stream: stream)
        var produced = ProducedEvents()
        produced.values.reserveCapacity(count)
        while let (line, event) = synthesizer.next() {
            produced.values.append(line)
            produced.truth[CountKey(trackID: event.trackID, hour: event.hour.index), default: 0] += 1
        }
        return produced
    }

    static func producer(_ cluster: KafkaMockCluster, options: KafkaClientOptions = KafkaClientOptions()) throws -> KafkaProducer {
        var configuration = KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.options = options
        return try KafkaProducer(configuration: configuration, logger: logger)
    }

    /// Produces each value (nil: a tombstone), keyed by nothing, to `partition` or spread by
    /// librdkafka; waits for delivery.
    static func produce(_ values: [[UInt8]?], to cluster: KafkaMockCluster, topic: String = "plays", partition: Int32? = nil) throws {
        let producer = try producer(cluster)
        try produce(values, with: producer, topic: topic, partition: partition)
    }

    static func produce(_ values: [[UInt8]?], with producer: KafkaProducer, topic: String = "plays", partition: Int32? = nil) throws {
        for (index, value) in values.enumerated() {
            // Keys decide the partition: a fixed key pins them all to one, a counter spreads them.
            let key: [UInt8] = partition.map { Array("pin-\($0)".utf8) } ?? Array(String(index).utf8)
            try producer.send(topic: topic, key: key, value: value)
        }
        try producer.flush(timeout: .seconds(60))
        let statistics = producer.deliveryStatistics
        guard statistics.failed == 0 else { throw FixtureError("\(statistics.failed) messages were not delivered") }
    }

    /// Starts a consumer and waits until the store's offsets add up to `events` messages.
    static func consumeUntilStored(_ events: Int, configuration: RealtimeConfiguration, limit: Duration = .seconds(60)) async throws -> RealtimeConsumer {
        let consumer = try RealtimeConsumer(configuration: configuration, logger: logger)
        try consumer.start()
        try await eventually(within: limit) {
            try StoreContents.storedMessages(configuration.store) >= events || consumer.hasEnded
        }
        return consumer
    }

    /// The oldest offset the broker still holds for a partition.
    static func lowWatermark(_ cluster: KafkaMockCluster, partition: Int32, topic: String = "plays") throws -> Int64? {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupID: "watermarks", topics: [topic])
        configuration.connectTimeout = .seconds(5)
        return try KafkaConsumer(configuration: configuration, logger: logger).queryWatermarks(topic: topic, partition: partition).low
    }

    /// The partitions' high watermarks, asked of the broker.
    static func highWatermarks(_ cluster: KafkaMockCluster, partitions: Int, topic: String = "plays") throws -> [Int32: Int64] {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupID: "watermarks", topics: [topic])
        configuration.connectTimeout = .seconds(5)
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        var watermarks: [Int32: Int64] = [:]
        for id in Int32(0)..<Int32(partitions) {
            watermarks[id] = try consumer.queryWatermarks(topic: topic, partition: id).high
        }
        return watermarks
    }
}

extension Fixtures {
    /// Every message value the topic holds now, read from offset 0 of each partition by a
    /// consumer of a group of its own: what the log really has, whatever producers were told.
    static func loggedValues(_ cluster: KafkaMockCluster, partitions: Int, topic: String = "plays") async throws -> [[UInt8]] {
        final class Collector: KafkaConsumerHandler, Sendable {
            let values = Locked<[[UInt8]]>([])
            func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
                Dictionary(uniqueKeysWithValues: partitions.map { ($0, 0) })
            }
            func consume(_ batch: KafkaMessageBatch) throws {
                values.withLock { values in
                    for message in batch { values.append(message.value.map { Array($0) } ?? []) }
                }
            }
        }
        let total = Int(try highWatermarks(cluster, partitions: partitions, topic: topic).values.reduce(0, +))
        var configuration = KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers,
                                                       groupID: "read-back-\(UUID().uuidString)", topics: [topic])
        configuration.connectTimeout = .seconds(5)
        configuration.options.set("max.poll.interval.ms", String(KafkaMockCluster.consumerMaxPollIntervalMilliseconds))
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        let collector = Collector()
        let deadline = ContinuousClock.now + .seconds(120)
        try await BlockingThread.run(name: "read-back") {
            try consumer.run(until: { collector.values.withLock(\.count) >= total || ContinuousClock.now >= deadline }, handler: collector)
        }
        let values = collector.values.withLock { $0 }
        guard values.count == total else { throw FixtureError("read back \(values.count) of the \(total) messages in \(topic)") }
        return values
    }
}

/// What the realtime layer holds, read through the seam (`LayerReads`).
struct StoreContents {
    var counts: [CountKey: Int64] = [:]
    var offsets: [Int32: Int64] = [:]

    /// Messages consumed, assuming every partition started at offset 0.
    var storedMessages: Int { Int(offsets.values.reduce(0, +)) }

    /// Every hour there is, for reading the whole realtime layer.
    static let allHours = HourRange(Hour(index: 0), Hour(index: Int64(Int32.max)))

    static func read(_ store: StoreBackend, topic: String = "plays") throws -> StoreContents {
        var contents = StoreContents()
        let layers = try store.openLayers()
        _ = try layers.beginSnapshots()
        defer { layers.endSnapshots() }
        contents.offsets = try offsets(layers, topic: topic)
        // The tracks with realtime rows, then each track's hours.
        var tracks = Set<Int64>()
        try layers.realtimeRows(.track, in: allHours, signal: .plays) { track, _ in tracks.insert(track) }
        for track in tracks {
            try layers.realtimeHours(.track(track), in: allHours, signal: .plays) { hour, plays in
                contents.counts[CountKey(trackID: track, hour: hour.index), default: 0] += plays
            }
        }
        return contents
    }

    /// `read(store).storedMessages`, without reading the counts.
    static func storedMessages(_ store: StoreBackend, topic: String = "plays") throws -> Int {
        Int(try offsets(store.openLayers(), topic: topic).values.reduce(0, +))
    }

    /// The stored next offsets of `topic`, read as the reader reads them (never taking a writer's lock).
    private static func offsets(_ layers: any LayerReads, topic: String) throws -> [Int32: Int64] {
        var offsets: [Int32: Int64] = [:]
        for partition in try layers.partitions() where partition.topic == topic { offsets[partition.partition] = partition.nextOffset }
        return offsets
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A fresh, empty store of `kind` (its SQLite files in a scratch folder) for `body`, removed
/// when `body` ends.
func withStore<T>(_ kind: StoreKind, _ body: (StoreBackend) async throws -> T) async throws -> T {
    try await withTemporaryDirectory { directory in
        let store = try kind.makeStore(directory: directory.path + "/data")
        defer { StoreKind.remove(store) }
        return try await body(store)
    }
}

/// Compares counts and says where they differ (the first few keys), nil when they are equal:
/// `#expect(mismatch(a, b) == nil)` prints that, not two dictionaries of a million keys.
func mismatch(_ actual: [CountKey: Int64], _ expected: [CountKey: Int64]) -> String? {
    let keys = Set(actual.keys).union(expected.keys).filter { actual[$0] != expected[$0] }
    guard !keys.isEmpty else { return nil }
    let total = (actual.values.reduce(0, +), expected.values.reduce(0, +))
    return "\(keys.count) keys differ (plays \(total.0) vs \(total.1)); e.g. " +
        keys.prefix(5).map { "\($0): \(actual[$0] ?? 0) vs \(expected[$0] ?? 0)" }.joined(separator: ", ")
}

extension Duration {
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
