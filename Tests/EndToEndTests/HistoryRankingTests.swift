import Foundation
import Patience
import Programs
import Scratch
import Testing

/// A month of history through `run`: rankings over the last day, week, month, all time and random
/// ranges equal a truth computed from the logs, a batch commit shows in the very next ranking, and
/// the realtime rows of the hours it covers are compacted away without changing any answer.
@Suite("run: rankings over a month of history, fresh after a batch, compaction", .onTestThreads, .serialized)
struct HistoryRankingTests {
    static let days: Int64 = 30
    static let firstHour = TestDay.firstHour - (days - 1) * 24
    static let hours = firstHour..<(TestDay.firstHour + 24)

    @Test("top-N over any range is exact before and right after a batch, and compaction leaves every answer unchanged")
    func rankingsAndCompaction() async throws {
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            let data = scratch.appendingPathComponent("data")
            try await runCounterpointJSON([
                "generate", "--logs", logs.path, "--events", "40000", "--tracks", "400", "--hours", "\(Self.days * 24)",
                "--start", Hours.text(Self.firstHour), "--seed", "29", "--duplicates", "0.05", "--json",
            ], scratch: scratch)
            let exact = try LogTruth(logs: logs)
            let everyCopy = try RunMergeTests.countEveryCopy(logs: logs)

            let run = try Executable.start([
                "run", "--data-dir", data.path, "--logs", scratch.appendingPathComponent("archive").path,
                "--listen", "127.0.0.1:0", "--partitions", "4", "--flush-interval-ms", "100",
                "--batch-interval-seconds", "3600", "--snapshot-age-ms", "0",
            ], scratch: scratch)
            do {
                let (broker, port) = try await RunMergeTests.addresses(of: run)
                let server = Server(command: run, port: port)
                let replay = try await runCounterpointJSON(["replay", "--brokers", broker, "--logs", logs.path, "--json"],
                                                           scratch: scratch)
                try await RunMergeTests.waitUntilConsumed(server, events: int(replay["events"]))

                // Realtime only: every copy counts.
                let ranges = Self.ranges()
                for range in ranges {
                    try Self.expectTop(server, range: range, truth: everyCopy, "realtime only")
                }

                // A batch over every hour but the last day; the very next ranking is exact there.
                let covered = Self.firstHour..<(TestDay.firstHour)
                try await Steps.batch(logs: logs, data: data, scratch: scratch,
                                      extraArguments: ["--from", Hours.text(covered.lowerBound), "--to", Hours.text(covered.upperBound)])
                let merged = Self.merge(exact: exact.plays, realtime: everyCopy, covered: covered)
                for range in ranges {
                    try Self.expectTop(server, range: range, truth: merged, "after the batch")
                }
                let before = try Self.answers(server, ranges: ranges, tracks: Array(exact.trackIDs.prefix(50)))

                // Compaction: the realtime rows of covered hours go within a minute.
                let realtime = data.appendingPathComponent("realtime.sqlite").path
                let compacted = try await eventually(within: .seconds(60), every: .milliseconds(500)) {
                    try Self.sqliteCount(realtime, "SELECT count(*) FROM realtime_counts WHERE hour < \(covered.upperBound)") == 0
                }
                #expect(compacted, "realtime rows of covered hours left after a minute")
                #expect(try Self.sqliteCount(realtime, "SELECT count(*) FROM realtime_counts WHERE hour >= \(covered.upperBound)") > 0)
                #expect(try Self.answers(server, ranges: ranges, tracks: Array(exact.trackIDs.prefix(50))) == before)
                try await server.stop(timeout: .seconds(15))
            } catch {
                await run.killIfRunning()
                throw error
            }
        }
    }

    /// The last 24 h, 7 d and 30 d, all time, and random hour ranges (one seed, so a failure repeats).
    static func ranges() -> [Range<Int64>?] {
        let end = hours.upperBound
        var ranges: [Range<Int64>?] = [(end - 24)..<end, (end - 24 * 7)..<end, (end - 24 * 30)..<end, nil]
        var state: UInt64 = 12_345
        for _ in 0..<6 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let lower = hours.lowerBound + Int64(state >> 33) % Int64(hours.count)
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let upper = min(end, lower + 1 + Int64(state >> 33) % (24 * 12))
            ranges.append(lower..<upper)
        }
        return ranges
    }

    static func query(_ range: Range<Int64>?) -> String {
        guard let range else { return "" }
        return "&from=\(Hours.text(range.lowerBound))&to=\(Hours.text(range.upperBound))"
    }

    static func expectTop(_ server: Server, range: Range<Int64>?, truth: [Int64: [Int64: Int]], _ phase: String) throws {
        var totals: [Int64: Int] = [:]
        for (track, byHour) in truth {
            totals[track] = byHour.reduce(0) { range?.contains($1.key) ?? true ? $0 + $1.value : $0 }
        }
        let expected = totals.filter { $0.value > 0 }
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(25)
        let answer = try server.json("/v1/top?limit=25\(query(range))")
        let tracks = answer["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.map { int64($0["track_id"]) } == expected.map(\.key), "\(phase): top over \(query(range))")
        #expect(tracks.map { int($0["plays"]) } == expected.map(\.value), "\(phase): plays over \(query(range))")
    }

    /// The merge rule over the test's own counts: exact plays in covered hours, every copy elsewhere.
    static func merge(exact: [Int64: [Int64: Int]], realtime: [Int64: [Int64: Int]], covered: Range<Int64>) -> [Int64: [Int64: Int]] {
        var merged: [Int64: [Int64: Int]] = [:]
        for (track, byHour) in realtime {
            for (hour, plays) in byHour where !covered.contains(hour) { merged[track, default: [:]][hour] = plays }
        }
        for (track, byHour) in exact {
            for (hour, plays) in byHour where covered.contains(hour) { merged[track, default: [:]][hour] = plays }
        }
        return merged
    }

    static func answers(_ server: Server, ranges: [Range<Int64>?], tracks: [Int64]) throws -> [String] {
        var bodies: [String] = []
        let ids = tracks.map(String.init).joined(separator: ",")
        for range in ranges {
            bodies.append(try server.request("/v1/top?limit=100\(query(range))").text)
            bodies.append(try server.request("/v1/plays?track_id=\(ids)\(query(range))").text)
        }
        for track in tracks.prefix(5) {
            bodies.append(try server.request("/v1/tracks/\(track)/timeline?step=day\(query(hours))").text)
        }
        // The realtime freshness moves on with every flush; the counts must not.
        return bodies.map { $0.replacing(/"freshness":\{[^}]*\}/, with: "") }
    }

    static func sqliteCount(_ path: String, _ sql: String) throws -> Int {
        let output = try Program.checkBlocking("/usr/bin/sqlite3", ["-readonly", path, sql], mergingErrors: false)
        guard let count = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CommandError(description: "sqlite3 \(sql) printed \(output)")
        }
        return count
    }
}
