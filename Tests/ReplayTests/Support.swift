import CounterpointCore
import EventLogs
import Foundation
import Generator
import Kafka
import KafkaTestSupport
import Logging
import Replay
import Runtime
import Testing

/// Records every message a consumer hands it.
final class RecordingHandler: KafkaConsumerHandler, Sendable {
    let messages = Locked<[ReceivedMessage]>([])

    var count: Int { messages.withLock { $0.count } }

    func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] { [:] }

    func consume(_ batch: KafkaMessageBatch) throws {
        let copies = batch.map(ReceivedMessage.init)
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

    /// Runs `replayer` on a thread of its own until it ends or `stop` is raised; its outcome
    /// shows up in the returned box.
    static func start(_ replayer: Replayer, until stop: StopSignal,
                      progress: @escaping @Sendable (ReplayProgress) -> Void = { _ in }) -> Locked<Result<ReplaySummary, ReplayError>?> {
        let outcome = Locked<Result<ReplaySummary, ReplayError>?>(nil)
        _ = BlockingThread(name: "test-replayer") {
            let result = Result { () throws(ReplayError) in try replayer.run(until: stop, progress: progress) }
            outcome.withLock { $0 = result }
        }
        return outcome
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
        try await BlockingThread.run(name: "test-consumer") {
            try consumer.run(until: { handler.count >= count || ContinuousClock.now >= deadline }, handler: handler)
        }
        return handler.messages.value
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

/// The track id of a valid event, nil for anything else.
func trackID(of line: [UInt8]) -> Int64? {
    if case .success(let event) = EventParser.parse(line) { return event.trackID }
    return nil
}
