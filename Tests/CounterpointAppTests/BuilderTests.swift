import Archive
import BatchJob
import CounterpointApp
import CounterpointCore
import CounterStore
import Foundation
import HTTPServer
import HTTPTestClient
import Kafka
import Patience
import Reader
import Realtime
import Replay
import Scratch
import Testing

/// The builders the executable calls, called in-process: temp directories, port 0, the mock
/// broker, and answers read over a real socket.
@Suite("the composition root, built in-process", .onTestThreads)
struct BuilderTests {
    /// 2026-11-20T10:00:00Z, an hour well in the past.
    static let tenOClock: Int64 = 1_795_168_800

    @Test("the demo's history is 48 hours at its live rate, but never more than a million events, whatever the rate")
    func demoHistoryIsBounded() {
        #expect(RunConfiguration.demoHistoryEvents(rate: 5) == 864_000)
        // 20,000 a second for 48 hours would be 3.5 billion events, 700 GB of logs.
        #expect(RunConfiguration.demoHistoryEvents(rate: 20_000) == 1_000_000)
        #expect(RunConfiguration.demoHistoryEvents(rate: 0) == 0)
    }

    @Test("batch then serve: the reader answers the plays of the logs the batch read, de-duplicated")
    func batchThenServe() async throws {
        try await withTemporaryDirectory { directory in
            // Hour 10 of 2026-11-20: track 7 played 5 times (one event sent twice), track 8 twice.
            let hourDirectory = directory.appendingPathComponent("logs/2026-11-20")
            try FileManager.default.createDirectory(at: hourDirectory, withIntermediateDirectories: true)
            var lines = (0..<5).map { playEvent(id: "seven-\($0)", track: 7, at: Self.tenOClock + 60 * Int64($0)) }
            lines.append(playEvent(id: "seven-0", track: 7, at: Self.tenOClock))
            lines += (0..<2).map { playEvent(id: "eight-\($0)", track: 8, at: Self.tenOClock + 600) }
            try Data(lines.map { $0 + [UInt8(ascii: "\n")] }.joined()).write(to: hourDirectory.appendingPathComponent("10.ndjson"))

            let data = directory.appendingPathComponent("data").path
            let store = try StoreBackend(store: "", dataDirectory: data)
            let summary = try buildBatch(BatchConfiguration(logPaths: [directory.appendingPathComponent("logs").path],
                                                            from: Hour(epochSeconds: Self.tenOClock),
                                                            to: Hour(epochSeconds: Self.tenOClock + 3_600),
                                                            store: store, scratchDirectory: data),
                                         logger: quietLogger).run()
            #expect(summary.counted == 7)
            #expect(summary.duplicates == 1)

            let application = try await buildServe(
                ReaderConfiguration(store: store, server: HTTPServerConfiguration(port: 0, threadCount: 2)), logger: quietLogger)
            let port = try #require(application.readerPort)
            #expect(port > 0)
            try await whileRunning([application]) { () async throws in
                #expect(try plays(of: 7, port: port) == 5)
                #expect(try plays(of: 8, port: port) == 2)
                #expect(try plays(of: 9, port: port) == 0)
                #expect(try getJSON("/readyz", port: port).status == 200)
            }
            // Stopped: nothing listens on the port any more.
            #expect(throws: (any Error).self) { try TestClient(port: port).request("/healthz") }
        }
    }

    /// `run` on its embedded broker with `partitions`, flushing every 50 ms, its reader on a free port.
    static func runConfiguration(data: String, partitions: Int) throws -> RunConfiguration {
        var configuration = RunConfiguration(store: try StoreBackend(store: "", dataDirectory: data), dataDirectory: data)
        configuration.partitions = partitions
        configuration.flushInterval = .milliseconds(50)
        configuration.reader.server = HTTPServerConfiguration(port: 0, threadCount: 2)
        return configuration
    }

    @Test("run on its embedded broker counts the plays produced to it, and reports every component running")
    func runCountsWhatIsProduced() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            let configuration = try Self.runConfiguration(data: data, partitions: 2)
            let application = try await buildRun(configuration, logger: quietLogger)
            let port = try #require(application.readerPort)
            let brokers = try #require(application.bootstrapServers)

            let now = Int64(Date().timeIntervalSince1970) - 60
            let events = (0..<25).map { playEvent(id: "run-a-\($0)", track: 42, at: now) }
                + (0..<4).map { playEvent(id: "run-b-\($0)", track: 43, at: now) }
            try await whileRunning([application]) {
                let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: brokers), logger: quietLogger)
                for (index, event) in events.enumerated() {
                    try producer.send(topic: "plays", key: Array(String(index).utf8), value: event)
                }
                try producer.flush(timeout: .seconds(60))
                #expect(producer.deliveryStatistics.failed == 0)

                #expect(try await eventually(within: .seconds(90)) {
                    try plays(of: 42, port: port) == 25 && plays(of: 43, port: port) == 4
                })
                #expect(try plays(of: 42, port: port) == 25)
                #expect(try plays(of: 43, port: port) == 4)
                #expect(try await eventually(within: .seconds(90)) { try getJSON("/readyz", port: port).status == 200 })
                let components = try #require(getJSON("/v1/status", port: port).object["components"] as? [[String: Any]])
                let names = Set(components.compactMap { $0["name"] as? String })
                #expect(names.isSuperset(of: ["consumer", "archiver", "scheduled batch", "reader"]), "\(names)")
            }
            let stopped = application.health.reports().filter { $0.state == .stopped }.map(\.name)
            #expect(Set(stopped).isSuperset(of: ["consumer", "archiver", "scheduled batch", "reader"]), "\(stopped)")
        }
    }

    @Test("replay, built in-process, produces every event of a log file to run's embedded broker, and its application ends by itself")
    func replayProducesALogFile() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            let application = try await buildRun(try Self.runConfiguration(data: data, partitions: 2), logger: quietLogger)
            let port = try #require(application.readerPort)
            let brokers = try #require(application.bootstrapServers)
            let now = Int64(Date().timeIntervalSince1970) - 60
            let file = directory.appendingPathComponent("replayed.ndjson")
            let lines = (0..<40).map { playEvent(id: "replay-\($0)", track: 44 + Int64($0 % 2), at: now) }
            try Data(lines.joined(separator: [UInt8(ascii: "\n")]) + [UInt8(ascii: "\n")]).write(to: file)

            try await whileRunning([application]) {
                let replay = try await buildReplay(source: try ReplaySource.logs(at: [file.path]),
                                                   producer: KafkaProducerConfiguration(bootstrapServers: brokers),
                                                   configuration: ReplayConfiguration(topic: "plays"), logger: quietLogger)
                try await replay.application.run()
                let summary = try await replay.outcome.result.get()
                #expect(summary.events == 40 && summary.delivered == 40 && summary.failed == 0)
                #expect(try await eventually(within: .seconds(90)) {
                    try plays(of: 44, port: port) == 20 && plays(of: 45, port: port) == 20
                })
            }
        }
    }

    @Test("run again on the same data directory counts every event of its new embedded broker from the first, keeps the earlier counts and reports no offset gap")
    func runAgainOnTheSameData() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            let configuration = try Self.runConfiguration(data: data, partitions: 1)
            let now = Int64(Date().timeIntervalSince1970) - 60

            /// Builds a run, produces `events` plays of track 42 to its broker before it starts
            /// (so the consumer finds them all there), and waits until track 42 has `total` plays.
            func run(_ label: String, events: Int, total: Int64) async throws -> [[String: Any]] {
                let application = try await buildRun(configuration, logger: quietLogger)
                let port = try #require(application.readerPort)
                let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: try #require(application.bootstrapServers)),
                                                 logger: quietLogger)
                for index in 0..<events {
                    try producer.send(topic: "plays", key: Array(String(index).utf8), value: playEvent(id: "\(label)-\(index)", track: 42, at: now))
                }
                try producer.flush(timeout: .seconds(60))
                var gaps: [[String: Any]] = []
                try await whileRunning([application]) {
                    #expect(try await eventually(within: .seconds(90)) { try plays(of: 42, port: port) == total })
                    let status = try getJSON("/v1/status", port: port).object
                    gaps = try #require((status["realtime"] as? [String: Any])?["offset_gaps"] as? [[String: Any]])
                }
                return gaps
            }

            #expect(try await run("first", events: 10, total: 10).isEmpty)
            // The second broker holds more events than the first run read: with its offsets
            // kept, the consumer would start at offset 10 and never count the first ten.
            let gaps = try await run("second", events: 25, total: 35)
            #expect(gaps.isEmpty, "\(gaps)")
        }
    }

    @Test("a second run on its embedded broker is refused the data directory the first one uses, and gets it once the first has stopped")
    func oneRunPerDataDirectory() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            let configuration = try Self.runConfiguration(data: data, partitions: 1)
            let first = try await buildRun(configuration, logger: quietLogger)
            try await whileRunning([first]) {
                do {
                    _ = try await buildRun(configuration, logger: quietLogger)
                    Issue.record("a second run was built on a data directory in use")
                } catch let error as RunError {
                    #expect("\(error)".contains(data))
                    #expect("\(error)".contains("--data-dir"))
                }
            }
            // Within a few seconds: a process another test starts at the moment the first run
            // gives its claim up holds a copy of the lock's descriptor until it runs its program.
            let again = try #require(try await eventualValue(within: .seconds(5)) {
                try? await buildRun(configuration, logger: quietLogger)
            })
            try await whileRunning([again]) {}
        }
    }

    @Test("consume, archive and serve built side by side on one broker: every event counted once and archived once")
    func consumeArchiveAndServe() async throws {
        try await withTemporaryDirectory { directory in
            let cluster = try KafkaMockCluster(logger: quietLogger)
            try cluster.createTopic("plays", partitions: 3)
            let store = try StoreBackend(store: "", dataDirectory: directory.appendingPathComponent("data").path)
            let logs = directory.appendingPathComponent("logs")

            var realtime = RealtimeConfiguration(bootstrapServers: cluster.bootstrapServers, store: store)
            realtime.flushInterval = .milliseconds(50)
            realtime.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds
            var archive = ArchiverConfiguration(bootstrapServers: cluster.bootstrapServers, logRoot: logs.path)
            archive.consumer.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds
            archive.commitInterval = .milliseconds(100)
            let consumer = try await buildConsume(realtime, logger: quietLogger)
            let archiver = try await buildArchive(archive, logger: quietLogger)
            let reader = try await buildServe(ReaderConfiguration(store: store, server: HTTPServerConfiguration(port: 0, threadCount: 2)),
                                              logger: quietLogger)
            let port = try #require(reader.readerPort)

            let now = Int64(Date().timeIntervalSince1970) - 60
            let events = (0..<40).map { playEvent(id: "side-\($0)", track: 11 + Int64($0 % 2), at: now) }
            try await whileRunning([consumer, archiver, reader]) {
                let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers),
                                                 logger: quietLogger)
                for (index, event) in events.enumerated() {
                    try producer.send(topic: "plays", key: Array(String(index).utf8), value: event)
                }
                try producer.flush(timeout: .seconds(60))
                #expect(try await eventually(within: .seconds(90)) {
                    try plays(of: 11, port: port) == 20 && plays(of: 12, port: port) == 20
                })
                #expect(try await eventually(within: .seconds(90)) { try archivedLines(under: logs).count == events.count })
            }
            #expect(Set(try archivedLines(under: logs)) == Set(events.map { String(decoding: $0, as: UTF8.self) }))
        }
    }

    /// Every line of every event-log file under `root`.
    func archivedLines(under root: URL) throws -> [String] {
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        return try files.filter { $0.pathExtension == "ndjson" }.flatMap { file in
            try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
        }
    }
}
