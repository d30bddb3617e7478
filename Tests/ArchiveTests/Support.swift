@testable import Archive
import BatchJob
import Runtime
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Kafka
import Logging

let quietLogger = Logger(label: "archive-tests") { _ in SwiftLogNoOpLogHandler() }

/// Hours of a fixed day, 2026-11-20, so tests read as "hour 10 of the day".
let day = Hour(index: UTCTime.daysFromCivil(year: 2026, month: 11, day: 20) * 24)
func hour(_ offset: Int64) -> Hour { day.advanced(by: offset) }

/// Epoch milliseconds `minute` minutes into hour `offset` of the day.
func time(_ offset: Int64, minute: Int64) -> Int64 { (hour(offset).epochSeconds + minute * 60) * 1000 }

/// One valid play event as it travels in Kafka.
struct Play: Hashable {
    var eventID: String
    var track: Int64
    var occurredAt: Int64

    var json: String {
        #"{"event_id":"\#(eventID)","type":"play","track_id":\#(track),"occurred_at":"\#(UTCTime.format(epochMilliseconds: occurredAt))","client":"ios"}"#
    }

    var hour: Hour { Hour(epochMilliseconds: occurredAt) }
}

/// A mock cluster, a topic, a log root and a data directory, removed when the test ends.
final class ArchiveWorkspace: Sendable {
    let root: String
    let cluster: KafkaMockCluster
    let topic = "plays"
    private let producer: KafkaProducer

    var logs: String { root + "/logs" }
    var location: StoreLocation { StoreLocation(directory: root + "/data") }

    init(partitions: Int) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("archive-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        cluster = try KafkaMockCluster(logger: quietLogger)
        try cluster.createTopic(topic, partitions: partitions)
        producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: quietLogger)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Produces events keyed by track id, as producers do, and waits for their delivery.
    func produce(_ plays: [Play]) throws {
        for play in plays {
            try producer.send(topic: topic, key: Array(String(play.track).utf8), value: Array(play.json.utf8))
        }
        try producer.flush(timeout: .seconds(10))
    }

    /// Produces raw values (nil: a tombstone) with a Kafka timestamp.
    func produceRaw(_ values: [[UInt8]?], timestampMilliseconds: Int64, key: String = "1") throws {
        for value in values {
            try producer.send(topic: topic, key: Array(key.utf8), value: value, timestampMilliseconds: timestampMilliseconds)
        }
        try producer.flush(timeout: .seconds(10))
    }

    func configuration(allowedLateness: Duration = .seconds(600)) -> ArchiverConfiguration {
        var configuration = ArchiverConfiguration(bootstrapServers: cluster.bootstrapServers, topic: topic, logRoot: logs)
        // The mock waits for every member to rejoin; fast heartbeats make rebalances quick.
        configuration.consumer.sessionTimeoutMilliseconds = 6_000
        configuration.consumer.heartbeatIntervalMilliseconds = 500
        configuration.consumer.connectTimeout = .seconds(5)
        configuration.consumer.options.set("max.poll.interval.ms", String(KafkaMockCluster.consumerMaxPollIntervalMilliseconds))
        configuration.allowedLateness = allowedLateness
        configuration.commitInterval = .milliseconds(200)
        return configuration
    }

    func startArchiver(allowedLateness: Duration = .seconds(600), compress: Bool = true, clock: WallClock = .system,
                       logger: Logger = quietLogger) throws -> Archiver {
        var configuration = configuration(allowedLateness: allowedLateness)
        configuration.compressClosedHours = compress
        configuration.clock = clock
        let archiver = try Archiver(configuration: configuration, logger: logger)
        try archiver.start()
        return archiver
    }

    /// The batch layer over the archive: every closed hour, or the given range.
    func batch(from: Hour? = nil, to: Hour? = nil) throws -> BatchSummary {
        try BatchJob.run(BatchConfiguration(logPaths: [logs], from: from, to: to, store: .sqlite(location), scratchDirectory: location.directory, workers: 2), logger: quietLogger)
    }

    /// Merged plays of `track` in one hour, as the reader answers them.
    func plays(_ track: Int64, at hour: Hour) throws -> Int64 {
        try StoreBackend.sqlite(location).openReader().plays(track: track, in: HourRange(hour, hour.advanced(by: 1))).plays
    }

    /// The layout files of the archive, relative to the log root, sorted.
    func archiveFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: logs)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: logs + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(path)
            }
        }
        return files.sorted()
    }

    /// The lines of a log file, plain or gzip.
    func lines(of relativePath: String) throws -> [String] {
        var text: [UInt8] = []
        try LogReader(path: logs + "/" + relativePath).forEachChunk { chunk, _ in text.append(contentsOf: chunk) }
        return String(decoding: text, as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    func isClosed(_ hour: Hour) -> Bool {
        FileManager.default.fileExists(atPath: LogLayout.closedMarkerPath(root: logs, hour: hour))
    }
}

/// What an exact batch run counts: each distinct (hour, event id) once.
struct Truth {
    private var seen = Set<String>()
    private(set) var cells: [Cell: Int64] = [:]
    private(set) var duplicates = 0

    mutating func add(_ play: Play) {
        if seen.insert("\(play.hour.index)/\(play.eventID)").inserted {
            cells[Cell(track: play.track, hour: play.hour), default: 0] += 1
        } else {
            duplicates += 1
        }
    }

    var counted: Int64 { cells.values.reduce(0, +) }

    func cells(in hours: HourRange) -> [Cell: Int64] { cells.filter { hours.contains($0.key.hour) } }
}

struct Cell: Hashable, CustomStringConvertible {
    var track: Int64
    var hour: Hour
    var description: String { "track \(track) at \(hour)" }
}

/// Deterministic plays: `count` events spread over `hours`, in time order, on `tracks` tracks,
/// each `duplicateEvery`-th event sent twice (as a retrying producer would).
func plays(count: Int, from start: Int64, to end: Int64, tracks: Int64 = 40, duplicateEvery: Int = 10, prefix: String = "e") -> [Play] {
    var result: [Play] = []
    let span = end - start
    for index in 0..<count {
        let play = Play(eventID: "\(prefix)\(index)", track: 1 + Int64(index * 7) % tracks,
                        occurredAt: start + span * Int64(index) / Int64(count))
        result.append(play)
        if duplicateEvery > 0, index % duplicateEvery == 0 { result.append(play) }
    }
    return result
}
