import CounterpointCore
import EventLogs
import Foundation
import Generator
import Kafka
import Logging
import Replay
import Testing

/// A lock-protected value for state shared between a consumer thread and the test.
final class Shared<Value>: @unchecked Sendable {
    // Safe to share: every access goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var snapshot: Value { withLock { $0 } }
}

/// A consumed message copied out of librdkafka's buffers.
struct ReceivedMessage: Hashable, Sendable {
    var partition: Int32
    var offset: Int64
    var key: [UInt8]?
    var value: [UInt8]?

    var keyText: String? { key.map { String(decoding: $0, as: UTF8.self) } }
}

/// Records every message a consumer hands it.
final class RecordingHandler: KafkaConsumerHandler, @unchecked Sendable {
    // Safe to share: all state is in a `Shared` box.
    let messages = Shared<[ReceivedMessage]>([])

    var count: Int { messages.withLock { $0.count } }

    func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] { [:] }

    func consume(_ batch: KafkaMessageBatch) throws {
        let copies = batch.map {
            ReceivedMessage(partition: $0.partition, offset: $0.offset, key: $0.key.map { Array($0) }, value: $0.value.map { Array($0) })
        }
        messages.withLock { $0.append(contentsOf: copies) }
    }
}

enum Fixtures {
    /// Quiet: librdkafka's connection chatter would drown test output.
    static let logger = Logger(label: "replay-tests") { _ in SwiftLogNoOpLogHandler() }

    static func cluster(topic: String = "plays", partitions: Int) throws -> KafkaMockCluster {
        let cluster = try KafkaMockCluster(logger: logger)
        try cluster.createTopic(topic, partitions: partitions)
        return cluster
    }

    static func producer(_ cluster: KafkaMockCluster) throws -> KafkaProducer {
        var configuration = KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.connectTimeout = .seconds(5)
        return try KafkaProducer(configuration: configuration, logger: logger)
    }

    /// Replays `source` with a producer of its own, as `counterpoint replay` does.
    static func replay(_ source: ReplaySource, into cluster: KafkaMockCluster,
                       configure: (inout ReplayConfiguration) -> Void = { _ in }) throws -> ReplaySummary {
        var configuration = ReplayConfiguration()
        configure(&configuration)
        let replayer = Replayer(source: source, producer: try producer(cluster), configuration: configuration, logger: logger)
        return try replayer.run()
    }

    /// Every message of `topic`, read back by a fresh consumer group until there are `count`.
    /// The topic's high watermarks are checked too, so messages beyond `count` would show.
    static func consume(_ count: Int, from cluster: KafkaMockCluster, topic: String = "plays", partitions: Int) async throws -> [ReceivedMessage] {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers,
                                                       groupID: "replay-test-\(UUID().uuidString)", topics: [topic])
        configuration.sessionTimeoutMilliseconds = 6_000
        configuration.heartbeatIntervalMilliseconds = 500
        configuration.connectTimeout = .seconds(5)
        configuration.options.set("max.poll.interval.ms", String(KafkaMockCluster.consumerMaxPollIntervalMilliseconds))
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        let stored = try (0..<Int32(partitions)).reduce(Int64(0)) {
            $0 + (try consumer.queryWatermarks(topic: topic, partition: $1).high)
        }
        #expect(stored == Int64(count), "the topic holds exactly the replayed messages")
        let handler = RecordingHandler()
        let deadline = ContinuousClock.now + .seconds(60)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                do {
                    try consumer.run(until: { handler.count >= count || ContinuousClock.now >= deadline }, handler: handler)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
        return handler.messages.snapshot
    }

    /// Lines that are not blank, as `ReplaySource.logFiles` produces them, from every log under `paths`.
    static func eventLines(under paths: [String]) throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for file in try LogDiscovery.inventory(of: paths).files {
            try LogReader(file: file).forEachChunk { chunk, _ in
                for line in chunk.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                    if case .failure(let rejection) = EventParser.parse(line), rejection.reason == .empty { continue }
                    lines.append(Array(line))
                }
            }
        }
        return lines
    }

    /// Generated logs of two hours, with malformed lines among the valid events.
    @discardableResult
    static func generate(into directory: URL, events: Int, malformed: Double = 0, gzip: Bool = false, seed: UInt64 = 7) throws -> GeneratorSummary {
        var configuration = GeneratorConfiguration()
        configuration.events = events
        configuration.tracks = 200
        configuration.hours = 2
        configuration.start = Hour(epochMilliseconds: 1_795_000_000_000)
        configuration.malformedRate = malformed
        configuration.gzip = gzip
        configuration.seed = seed
        return try Generator.generate(configuration, into: directory.path)
    }
}

/// A fresh folder under the system's temporary directory, removed when `body` ends.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("counterpoint-replay-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// The track id of a valid event, nil for anything else.
func trackID(of line: [UInt8]) -> Int64? {
    if case .success(let event) = EventParser.parse(line) { return event.trackID }
    return nil
}
