import Foundation
import Scratch
import Testing

extension EndToEnd {
    @Suite("bad batch input")
    struct BadInput {
        /// A batch that must fail: non-zero exit, one line of its own on stderr naming `path`.
        func expectFailure(_ arguments: [String], naming path: String, scratch: URL,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let result = try await runCounterpoint(arguments, scratch: scratch)
            #expect(result.exited && result.status != 0, "\(result.summary)", sourceLocation: sourceLocation)
            let messages = result.stderrMessages
            #expect(messages.count == 1, "one error line expected:\n\(result.summary)", sourceLocation: sourceLocation)
            #expect(messages.first?.contains(path) == true, "the error names \(path):\n\(result.summary)",
                    sourceLocation: sourceLocation)
            #expect(result.stdout.isEmpty, "\(result.summary)", sourceLocation: sourceLocation)
        }

        @Test("a missing, unreadable or corrupt log path fails the batch with one line naming it, and changes nothing")
        func unreadableInputsFailWithoutChangingTheStore() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                try await Steps.generate(into: logs, scratch: scratch, events: 10_000, tracks: 100, seed: 31)
                try await Steps.batch(logs: logs, data: data, scratch: scratch)
                let tracks = Array(Int64(1)...105)
                let timelineTracks: [Int64] = [1, 4]
                let files = FileManager.default

                // Logs the failing batches would otherwise have applied: other counts, gzip.
                let gzipLogs = scratch.appendingPathComponent("gzip-logs")
                try await runCounterpointJSON([
                    "generate", "--logs", gzipLogs.path, "--events", "10000", "--tracks", "100", "--hours", "24",
                    "--start", TestDay.start, "--seed", "32", "--gzip", "--json",
                ], scratch: scratch)
                let gzipFile = gzipLogs.appendingPathComponent("2026-11-20/05.ndjson.gz")
                let intactGzip = try Data(contentsOf: gzipFile)

                let brokenLayout = scratch.appendingPathComponent("broken-layout/2026-11-20")
                try files.createDirectory(at: brokenLayout, withIntermediateDirectories: true)
                try files.copyItem(at: logs.appendingPathComponent("2026-11-20/04.ndjson"),
                                   to: brokenLayout.appendingPathComponent("04.ndjson"))
                let danglingLink = brokenLayout.appendingPathComponent("05.ndjson")
                try files.createSymbolicLink(atPath: danglingLink.path, withDestinationPath: scratch.appendingPathComponent("gone").path)
                for hour in ["04", "05"] {
                    try touch(brokenLayout.appendingPathComponent("\(hour).closed"))
                }
                let fifo = scratch.appendingPathComponent("events.fifo")
                #expect(mkfifo(fifo.path, 0o600) == 0)

                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    let before = try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                    let runsBefore = try Steps.batchRunCount(server)
                    func expectUnchanged(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
                        let after = try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                        for (target, body) in before where after[target] != body {
                            Issue.record("GET \(target.prefix(100)) changed after \(what)", sourceLocation: sourceLocation)
                        }
                        #expect(try Steps.batchRunCount(server) == runsBefore, "a run was recorded after \(what)",
                                sourceLocation: sourceLocation)
                    }

                    let missing = scratch.appendingPathComponent("no-such-logs").path
                    try await expectFailure(["batch", "--logs", missing, "--data-dir", data.path], naming: missing, scratch: scratch)
                    try expectUnchanged("a missing --logs path")

                    // A missing path next to a good one: the good one is not applied either.
                    try await expectFailure(["batch", "--logs", gzipLogs.path, "--logs", missing, "--data-dir", data.path],
                                            naming: missing, scratch: scratch)
                    try expectUnchanged("a missing --logs path beside a good one")

                    try await expectFailure(["batch", "--logs", fifo.path, "--data-dir", data.path], naming: fifo.path, scratch: scratch)
                    try expectUnchanged("a FIFO given as --logs")

                    let fileAsDirectory = logs.appendingPathComponent("2026-11-20/05.ndjson").path + "/"
                    try await expectFailure(["batch", "--logs", fileAsDirectory, "--data-dir", data.path],
                                            naming: fileAsDirectory, scratch: scratch)
                    try expectUnchanged("a log file used as a directory")

                    try await expectFailure(
                        ["batch", "--logs", brokenLayout.deletingLastPathComponent().path, "--data-dir", data.path],
                        naming: danglingLink.path, scratch: scratch)
                    try expectUnchanged("an hour log that is a dangling link")

                    try intactGzip.prefix(intactGzip.count / 2).write(to: gzipFile)
                    try await expectFailure(["batch", "--logs", gzipLogs.path, "--data-dir", data.path],
                                            naming: gzipFile.path, scratch: scratch)
                    try expectUnchanged("a truncated gzip file")

                    var corrupt = intactGzip
                    for offset in (intactGzip.count / 2)..<(intactGzip.count / 2 + 64) { corrupt[offset] ^= 0x5A }
                    try corrupt.write(to: gzipFile)
                    try await expectFailure(["batch", "--logs", gzipLogs.path, "--data-dir", data.path],
                                            naming: gzipFile.path, scratch: scratch)
                    try expectUnchanged("a gzip file corrupt in the middle")

                    // The same logs, repaired, apply.
                    try intactGzip.write(to: gzipFile)
                    try await Steps.batch(logs: gzipLogs, data: data, scratch: scratch)
                    let gzipTruth = try await gzipTruthFromPlainCopy(of: gzipLogs, scratch: scratch)
                    let totals = try Steps.totals(server, tracks: tracks)
                    for track in tracks {
                        #expect(totals[track] == gzipTruth.plays(of: track), "track \(track) after the repaired gzip batch")
                    }
                }
            }
        }

        /// The truth of gzip logs: the test regenerates them plain with the same seed (the
        /// generator writes the same events whatever the compression) and reads those.
        func gzipTruthFromPlainCopy(of gzipLogs: URL, scratch: URL) async throws -> LogTruth {
            let plain = scratch.appendingPathComponent("plain-copy")
            try await Steps.generate(into: plain, scratch: scratch, events: 10_000, tracks: 100, seed: 32)
            return try LogTruth(logs: plain)
        }

        @Test("malformed, oversized and invalid lines are counted by reason with samples, and never stop the batch")
        func rejectedLinesAreCountedByReason() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                let hourFolder = logs.appendingPathComponent("2026-11-20")
                try FileManager.default.createDirectory(at: hourFolder, withIntermediateDirectories: true)

                func event(_ id: String, track: String, at time: String, type: String = #""play""#) -> [UInt8] {
                    Array(#"{"event_id":"\#(id)","type":\#(type),"track_id":\#(track),"occurred_at":\#(time)}"#.utf8)
                }
                let oversized = Array(#"{"event_id":"big1","type":"play","track_id":7,"occurred_at":"2026-11-20T03:05:00Z","padding":""#.utf8)
                    + [UInt8](repeating: UInt8(ascii: "x"), count: 70_000) + Array(#""}"#.utf8)
                let lines: [[UInt8]] = [
                    event("e1", track: "7", at: #""2026-11-20T03:10:00Z""#),                      // 1
                    event("e2", track: "7", at: #""2026-11-20T03:20:00.5Z""#),                    // 2
                    Array(#"{"event_id":"bad1","type":"play""#.utf8),                             // 3 malformed_json
                    Array("not json at all".utf8),                                                // 4 malformed_json
                    event("e3", track: "8", at: "1795143600000"),                                 // 5 epoch ms, 03:00
                    [],                                                                           // 6 blank: skipped
                    Array(#"{"event_id":"m1","track_id":8,"occurred_at":"2026-11-20T03:00:00Z"}"#.utf8), // 7 missing_field
                    event("z1", track: "0", at: #""2026-11-20T03:00:00Z""#),                      // 8 invalid_field
                    event("l1", track: "8", at: #""2026-11-20T03:00:00Z""#, type: #""skip""#),    // 9 unsupported_type
                    oversized,                                                                    // 10 too_large
                    Array(#"{"event_id":"u"#.utf8) + [0xFF, 0xFE] + Array(#"1","type":"play","track_id":8,"occurred_at":"2026-11-20T03:00:00Z"}"#.utf8), // 11 invalid_utf8
                    event("e1", track: "7", at: #""2026-11-20T03:10:00Z""#),                      // 12 duplicate of 1
                    event("t1", track: "8", at: #""2026-11-20T03:00:00+01:00""#),                 // 13 invalid_field
                    event("e4", track: "9", at: #""2026-11-20T03:59:59.999Z""#),                  // 14
                ]
                let logFile = hourFolder.appendingPathComponent("03.ndjson")
                try Data(lines.map { $0 + [0x0A] }.joined()).write(to: logFile)
                try touch(hourFolder.appendingPathComponent("03.closed"))

                let truth = try LogTruth(logs: logs)
                #expect(truth.linesRead == 13 && truth.valid == 5 && truth.duplicates == 1 && truth.counted == 4)

                let summary = try await Steps.batch(logs: logs, data: data, scratch: scratch)
                #expect(int(summary["events_read"]) == 13)
                #expect(int(summary["valid"]) == 5)
                #expect(int(summary["duplicates"]) == 1)
                #expect(int(summary["counted"]) == 4)
                #expect(int(summary["rejected"]) == 8)
                let byReason = (summary["rejected_by_reason"] as? [String: Any] ?? [:]).mapValues { int($0) }
                #expect(byReason == [
                    "malformed_json": 2, "missing_field": 1, "invalid_field": 2,
                    "unsupported_type": 1, "too_large": 1, "invalid_utf8": 1,
                ])
                let samples = summary["rejected_sample"] as? [[String: Any]] ?? []
                let sampled = samples.map { ($0["source"] as? String ?? "", $0["reason"] as? String ?? "") }
                let expectedSamples = [
                    (3, "malformed_json"), (4, "malformed_json"), (7, "missing_field"), (8, "invalid_field"),
                    (9, "unsupported_type"), (10, "too_large"), (11, "invalid_utf8"), (13, "invalid_field"),
                ]
                #expect(sampled.map(\.1) == expectedSamples.map(\.1))
                for ((source, _), (line, reason)) in zip(sampled, expectedSamples) {
                    #expect(source.hasSuffix("2026-11-20/03.ndjson:\(line)"), "sample of \(reason) comes from \(source)")
                }
                for sample in samples {
                    #expect(!(sample["message"] as? String ?? "").isEmpty)
                    #expect((sample["payload_prefix"] as? String ?? "").utf8.count <= 1_024, "samples are bounded")
                }

                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    let totals = try Steps.totals(server, tracks: [7, 8, 9, 10])
                    #expect(totals == [7: 2, 8: 1, 9: 1, 10: 0])
                    let points = try Steps.hourlyTimeline(server, track: 7, hours: (TestDay.firstHour + 2)..<(TestDay.firstHour + 5))
                    #expect(points == [TestDay.firstHour + 2: 0, TestDay.firstHour + 3: 2, TestDay.firstHour + 4: 0])
                }
            }
        }
    }
}
