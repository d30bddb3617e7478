import Foundation
import Patience
import Programs
import Scratch
import Testing

/// The all-in-one `run` over its embedded broker: events replayed into Kafka are counted by
/// the realtime layer (every copy, duplicates included), a batch over the first half of the
/// hours replaces them with exact counts, and the reader answers batch for covered hours and
/// realtime after them (docs/architecture.md).
@Suite("run: realtime and batch merged by the reader", .onTestThreads, .serialized)
struct RunMergeTests {
    @Test("batch over the first half of the hours and realtime over all: the reader answers batch where covered, realtime after")
    func readerMergesBothLayers() async throws {
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            let data = scratch.appendingPathComponent("data")
            let archive = scratch.appendingPathComponent("archive")
            try await runCounterpointJSON([
                "generate", "--logs", logs.path, "--events", "6000", "--tracks", "20", "--hours", "4",
                "--start", TestDay.start, "--seed", "17", "--duplicates", "0.05", "--json",
            ], scratch: scratch)
            let exact = try LogTruth(logs: logs)
            let everyCopy = try Self.countEveryCopy(logs: logs)
            #expect(exact.duplicates > 0)

            let run = try Executable.start([
                "run", "--data-dir", data.path, "--logs", archive.path, "--listen", "127.0.0.1:0",
                "--partitions", "4", "--flush-interval-ms", "100", "--batch-interval-seconds", "3600",
            ], scratch: scratch)
            do {
                try await Self.check(run, logs: logs, data: data, scratch: scratch, exact: exact, everyCopy: everyCopy)
            } catch {
                await run.killIfRunning()
                throw error
            }
        }
    }

    /// Replays the logs into `run`, checks the realtime answers, runs a batch over the first
    /// two hours and checks the merged answers; stops `run` with SIGTERM (exit 0).
    static func check(_ run: RunningProgram, logs: URL, data: URL, scratch: URL, exact: LogTruth,
                      everyCopy: [Int64: [Int64: Int]]) async throws {
        let first = TestDay.firstHour
        let (broker, port) = try await Self.addresses(of: run)
        let server = Server(command: run, port: port)

        let replay = try await runCounterpointJSON(["replay", "--brokers", broker, "--logs", logs.path, "--json"],
                                                   scratch: scratch)
        let produced = int(replay["events"])
        #expect(produced == exact.valid)
        try await Self.waitUntilConsumed(server, events: produced)

        // Realtime alone: every hour counts every copy.
        let track: Int64 = 1
        let hours = first..<(first + 4)
        #expect(try Steps.hourlyTimeline(server, track: track, hours: hours) == everyCopy[track] ?? [:])
        // Waveforms and breakdowns, realtime alone: every copy, over the whole and random sub-ranges.
        let dimensions = try DimensionTruth(logs: logs)
        let none = first..<first
        try Self.checkDimensions(server, dimensions, hours: hours, covered: none)

        try await Steps.batch(logs: logs, data: data, scratch: scratch,
                              extraArguments: ["--from", Hours.text(first), "--to", Hours.text(first + 2)])
        try await Task.sleep(for: .milliseconds(200))  // past the reader's snapshot age

        for track in exact.trackIDs {
            let timeline = try server.json(
                "/v1/tracks/\(track)/timeline?from=\(Hours.text(first))&to=\(Hours.text(first + 4))")
            let points = timeline["points"] as? [[String: Any]] ?? []
            #expect(points.count == 4)
            for (offset, point) in points.enumerated() {
                let hour = first + Int64(offset)
                let covered = offset < 2
                let expected = covered ? exact.plays[track]?[hour] ?? 0 : everyCopy[track]?[hour] ?? 0
                #expect(int(point["plays"]) == expected, "track \(track) hour +\(offset)")
                #expect(point["source"] as? String == (covered ? "batch" : "realtime"))
            }
            let total = try server.json("/v1/tracks/\(track)/plays?from=\(Hours.text(first))&to=\(Hours.text(first + 4))")
            let batchPart = exact.plays(of: track, hours: first..<(first + 2))
            let realtimePart = (first + 2..<first + 4).reduce(0) { $0 + (everyCopy[track]?[$1] ?? 0) }
            #expect(int(total["batch_plays"]) == batchPart)
            #expect(int(total["realtime_plays"]) == realtimePart)
            #expect(int(total["plays"]) == batchPart + realtimePart)
        }
        // Merged: exact where the batch covered, every copy after.
        try Self.checkDimensions(server, dimensions, hours: hours, covered: first..<(first + 2))

        let freshness = try server.json("/v1/tracks/1/plays")["freshness"] as? [String: Any]
        #expect(freshness?["batch_covered_until"] as? String == Hours.text(first + 2))
        #expect(freshness?["realtime_flushed_at"] is String)

        // A covered hour without batch rows counts zero, though the realtime layer has plays there.
        let empty = scratch.appendingPathComponent("no-logs")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try await Steps.batch(logs: empty, data: data, scratch: scratch,
                              extraArguments: ["--from", Hours.text(first + 3), "--to", Hours.text(first + 4)])
        try await Task.sleep(for: .milliseconds(200))
        #expect(dimensions.tally(1, hours: (first + 3)..<(first + 4), covered: none).plays > 0)
        try DimensionTruth.check(server, track: 1, hours: (first + 3)..<(first + 4), expected: DimensionTruth.Tally())
        var lastHourCovered = dimensions.tally(1, hours: first..<(first + 2), covered: hours)
        lastHourCovered.add(dimensions.tally(1, hours: (first + 2)..<(first + 3), covered: none))
        try DimensionTruth.check(server, track: 1, hours: hours, expected: lastHourCovered)

        try await server.stop(timeout: .seconds(15))
    }

    /// The most played track and a few random ones, over `hours` and random sub-ranges of it.
    static func checkDimensions(_ server: Server, _ truth: DimensionTruth, hours: Range<Int64>, covered: Range<Int64>) throws {
        var random = SystemRandomNumberGenerator()
        for track in [1, 2] + (0..<3).map({ _ in Int64.random(in: 3...20, using: &random) }) {
            try DimensionTruth.check(server, track: track, hours: hours, expected: truth.tally(track, hours: hours, covered: covered))
            let lower = Int64.random(in: hours, using: &random)
            let range = lower..<Int64.random(in: lower...hours.upperBound, using: &random)
            try DimensionTruth.check(server, track: track, hours: range, expected: truth.tally(track, hours: range, covered: covered))
        }
    }

    /// Valid plays per (track, hour), every copy counted — what the realtime layer sees.
    static func countEveryCopy(logs: URL) throws -> [Int64: [Int64: Int]] {
        var counts: [Int64: [Int64: Int]] = [:]
        let files = (FileManager.default.enumerator(at: logs, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? []).filter { $0.lastPathComponent.hasSuffix(".ndjson") }
        for file in files {
            for line in try Data(contentsOf: file).split(separator: 0x0A) {
                guard let event = LogTruth.validEvent(Data(line)), event.type == "play" else { continue }
                let hour = event.occurredAt / LogTruth.millisecondsPerHour
                counts[event.trackID, default: [:]][hour, default: 0] += 1
            }
        }
        return counts
    }

    /// The embedded broker's and the reader's addresses, from `run`'s first stdout lines.
    static func addresses(of run: RunningProgram) async throws -> (broker: String, port: Int) {
        try await eventually(within: .seconds(30)) { announcedAddresses(in: run.stdout) != nil || !run.isRunning }
        if let addresses = announcedAddresses(in: run.stdout) { return addresses }
        throw CommandError(description: "run did not announce its addresses:\n\(run.stdout)\n\(run.stderr)")
    }

    /// The addresses `run` announces in `output`, once it has printed both.
    static func announcedAddresses(in output: String) -> (broker: String, port: Int)? {
        guard let broker = output.firstMatch(of: /embedded Kafka broker on ([0-9.:]+),/)?.1,
              let port = output.firstMatch(of: /reader listening on http:\/\/127\.0\.0\.1:([0-9]+)\//)?.1 else { return nil }
        return (String(broker), Int(port)!)
    }

    /// Waits until the realtime layer has committed every produced event (offsets at the end,
    /// no lag), as `/v1/status` reports it.
    static func waitUntilConsumed(_ server: Server, events: Int) async throws {
        var last: [String: Any] = [:]
        let consumed = try await eventually(within: .seconds(60), every: .milliseconds(100)) {
            last = try server.json("/v1/status")
            let realtime = last["realtime"] as? [String: Any] ?? [:]
            let partitions = realtime["partitions"] as? [[String: Any]] ?? []
            let committed = partitions.reduce(0) { $0 + int($1["next_offset"]) }
            return committed == events && int(realtime["lag_events"]) == 0
        }
        if consumed { return }
        throw CommandError(description: "the realtime layer did not commit \(events) events in time: \(last)")
    }
}
