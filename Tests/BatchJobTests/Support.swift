import BatchJob
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Generator
import Logging
import StoreTestSupport

/// A scratch directory holding event logs (`logs`) and the batch job's scratch files
/// (`data`), and the stores of one backend, all removed when the test ends.
struct Workspace {
    let root: String
    let store: StoreBackend
    var logs: String { root + "/logs" }
    var scratch: String { root + "/data" }

    static func with<T>(_ kind: StoreKind, _ body: (Workspace) throws -> T) throws -> T {
        try kind.withStore { store, root in try body(Workspace(root: root, store: store)) }
    }

    // MARK: Writing logs

    /// Writes `lines` (each followed by `\n`) to the hour file of `hour`.
    @discardableResult
    func writeHour(_ hour: Hour, _ lines: [String], segment: String? = nil, late: Bool = false,
                   gzip: Bool = false) throws -> String {
        let path = LogLayout.hourFilePath(root: logs, hour: hour, segment: segment, late: late, gzip: gzip)
        try writeLines(lines, to: path, gzip: gzip)
        return path
    }

    /// Writes `lines` through `LogWriter`; gzip files get one member per line, as an archiver
    /// flushing often leaves them.
    func writeLines(_ lines: [String], to path: String, gzip: Bool = false) throws {
        let writer = try LogWriter(path: path, gzip: gzip, append: false)
        for line in lines {
            try writer.write(line: Array(line.utf8))
            if gzip { try writer.flush() }
        }
        try writer.close()
    }

    /// Writes exactly `bytes` to `path` (for line ends and tails `LogWriter` would not produce).
    func writeRaw(_ bytes: String, to path: String) throws {
        try writeRaw(Array(bytes.utf8), to: path)
    }

    func writeRaw(_ bytes: [UInt8], to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func close(_ hours: Hour...) throws {
        for hour in hours { try LogLayout.markClosed(root: logs, hour: hour, durable: false) }
    }

    // MARK: Running and reading back

    func run(paths: [String]? = nil, from: Hour? = nil, to: Hour? = nil, all: Bool = false, workers: Int = 2,
             spillBudget: Int? = nil) throws -> BatchSummary {
        var configuration = BatchConfiguration(logPaths: paths ?? [logs], from: from, to: to, all: all,
                                               store: store, scratchDirectory: scratch, workers: workers)
        if let spillBudget { configuration.spillBudgetBytes = spillBudget }
        return try BatchJob.run(configuration, logger: quietLogger)
    }

    /// What each hour was computed from, as the batch store recorded it.
    func hourSources() throws -> [Hour: HourSource] { try store.openBatchWriter().hourSources() }

    /// Whether the batch layer holds anything: for SQLite, whether its file exists at all (a run
    /// that fails early must not even create it); otherwise, whether any run or coverage is recorded.
    func batchLayerWritten() throws -> Bool {
        if case let .sqlite(location) = store { return FileManager.default.fileExists(atPath: location.batchPath) }
        return try !runs().isEmpty || !coverage().ranges.isEmpty
    }

    /// Merged plays of `track` in `range`, as the reader answers them.
    func plays(_ track: Int64, _ range: HourRange) throws -> TrackPlays {
        try store.openReader().plays(track: track, in: range)
    }

    /// Merged plays of `track` in one hour.
    func plays(_ track: Int64, at hour: Hour) throws -> Int64 {
        try plays(track, HourRange(hour, hour.advanced(by: 1))).plays
    }

    /// Every non-zero (track, hour) count of `range`, read hour by hour through the reader.
    func counts(in range: HourRange) throws -> [Cell: Int64] {
        let reader = try store.openReader()
        var cells: [Cell: Int64] = [:]
        var hour = range.lower
        while hour < range.upper {
            for track in try reader.top(in: HourRange(hour, hour.advanced(by: 1)), limit: 1_000) {
                cells[Cell(track: track.id, hour: hour)] = track.plays
            }
            hour = hour.advanced(by: 1)
        }
        return cells
    }

    func coverage() throws -> Coverage { try store.openReader().coverage() }

    func runs() throws -> [BatchRun] { try store.openReader().recentRuns(limit: 100) }

    /// Staging directories the batch job left beside the stores.
    func stagingLeftovers() throws -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? []
        return entries.filter { $0.hasPrefix("batch-staging") }
    }
}

struct Cell: Hashable, CustomStringConvertible {
    var track: Int64
    var hour: Hour
    var description: String { "track \(track) at \(hour)" }
}

let quietLogger = Logger(label: "batchjob-tests") { _ in SwiftLogNoOpLogHandler() }

/// Hours of a fixed day, 2026-11-20, so tests read as "hour 10 of the day".
let day = Hour(index: UTCTime.daysFromCivil(year: 2026, month: 11, day: 20) * 24)
func hour(_ offset: Int64) -> Hour { day.advanced(by: offset) }
func hours(_ lower: Int64, _ upper: Int64) -> HourRange { HourRange(hour(lower), hour(upper)) }

/// One valid play event as an NDJSON line, `minute` minutes into `hour`.
func play(_ eventID: String, track: Int64, at hour: Hour, minute: Int64 = 7) -> String {
    let time = UTCTime.format(epochMilliseconds: (hour.epochSeconds + minute * 60) * 1000 + 250)
    return #"{"event_id":"\#(eventID)","type":"play","track_id":\#(track),"occurred_at":"\#(time)","client":"ios"}"#
}

/// What an exact batch run must count: every distinct (hour, event id) of valid events once.
struct Truth {
    private var seen = Set<String>()
    private(set) var cells: [Cell: Int64] = [:]
    private(set) var duplicates = 0

    mutating func add(_ eventID: String, track: Int64, at hour: Hour) {
        if seen.insert("\(hour.index)/\(eventID)").inserted {
            cells[Cell(track: track, hour: hour), default: 0] += 1
        } else {
            duplicates += 1
        }
    }

    var counted: Int64 { cells.values.reduce(0, +) }
}

extension BatchSummary {
    /// The numbers that must not depend on timing or on the number of workers.
    var counts: [String: Int] {
        var counts = ["eventsRead": eventsRead, "valid": valid, "duplicates": duplicates,
                      "outsideRange": outsideRange, "rejected": rejections.total, "tracks": tracks,
                      "hours": Int(hours), "rows": rows, "files": files, "counted": counted]
        for (reason, count) in rejections.counts { counts["rejected." + reason.rawValue] = count }
        return counts
    }
}

/// What `Generator` wrote, with its truth as cells.
struct GeneratedLogs {
    var start: Hour
    var events: Int
    var duplicates: Int
    var malformed: Int
    var truthCells: [Cell: Int64]
}

/// Generated logs from 2026-11-20T00 with closed hours and the generator's own truth.
func generateLogs(into root: String, events: Int, hours: Int, tracks: Int = 300, duplicateRate: Double = 0,
                  malformedRate: Double = 0, gzip: Bool = false, seed: UInt64 = 7) throws -> GeneratedLogs {
    var configuration = GeneratorConfiguration()
    configuration.events = events
    configuration.tracks = tracks
    configuration.listeners = 1_000
    configuration.start = day
    configuration.hours = hours
    configuration.duplicateRate = duplicateRate
    configuration.malformedRate = malformedRate
    configuration.gzip = gzip
    configuration.seed = seed
    configuration.recordTruth = true
    let summary = try Generator.generate(configuration, into: root)
    var cells: [Cell: Int64] = [:]
    for (key, plays) in summary.truth ?? [:] { cells[Cell(track: key.trackID, hour: key.hour)] = Int64(plays) }
    return GeneratedLogs(start: summary.start, events: summary.events, duplicates: summary.duplicates,
                         malformed: summary.malformed, truthCells: cells)
}
