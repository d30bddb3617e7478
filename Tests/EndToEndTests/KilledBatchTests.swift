import Foundation
import Programs
import Scratch
import Testing

extension EndToEnd {
    @Suite("a batch killed mid-run")
    struct KilledBatch {
        static func totalSize(of folder: URL) throws -> Int64 {
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])?
                .compactMap { $0 as? URL } ?? []
            return try files.reduce(0) { $0 + Int64(try $1.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) }
        }

        @Test("a batch killed with SIGKILL mid-run leaves the previous batch's counts intact, and a rerun applies")
        func killedBatchLeavesPreviousCounts() async throws {
            try await withTemporaryDirectory { scratch in
                let smallLogs = scratch.appendingPathComponent("logs-small")
                let largeLogs = scratch.appendingPathComponent("logs-large")
                let data = scratch.appendingPathComponent("data")
                try await Steps.generate(into: smallLogs, scratch: scratch, events: 20_000, tracks: 400, seed: 41)
                try await Steps.generate(into: largeLogs, scratch: scratch, events: 200_000, tracks: 400, seed: 42,
                                         duplicates: 0.01, malformed: 0.001)
                let tracks = Array(Int64(1)...400)
                let timelineTracks: [Int64] = [1, 3, 77]
                try await Steps.batch(logs: smallLogs, data: data, scratch: scratch)
                let firstAnswers = try await withServer(dataDirectory: data, scratch: scratch) { server in
                    try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                }

                // The kill moment is a random point of the batch's progress through its logs (bytes
                // it has read, from /proc), not of the clock, so that it lands mid-run however
                // fast or loaded the machine is. Until every byte is read nothing can be committed.
                let logBytes = try Self.totalSize(of: largeLogs)
                var random = SystemRandomNumberGenerator()
                // One worker and no point past 85 %: the last reads and the commit take a few
                // milliseconds, and a test process slowed by its sibling suites could otherwise see
                // the batch finish before it notices the kill point.
                for (attempt, band) in [0.02...0.3, 0.3...0.6, 0.6...0.85].enumerated() {
                    let fraction = Double.random(in: band, using: &random)
                    let moment = "attempt \(attempt + 1), killed at \(Int(fraction * 100))% of the logs read"
                    let batch = try Executable.start(["batch", "--logs", largeLogs.path, "--data-dir", data.path, "--json",
                                                    "--workers", "1"],
                                                   scratch: scratch)
                    let reached = try await batch.waitUntilRead(Int64(Double(logBytes) * fraction), timeout: .seconds(120))
                    batch.signal(SIGKILL)
                    let killed = try await batch.waitForExit(timeout: .seconds(10))
                    await batch.killIfRunning()
                    #expect(reached, "\(moment): the batch ended before that point: \(killed?.summary ?? "")")
                    #expect(killed?.exited == false && killed?.status == SIGKILL, "\(moment)")

                    try await withServer(dataDirectory: data, scratch: scratch) { server in
                        let answers = try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                        for (target, body) in firstAnswers where answers[target] != body {
                            Issue.record("\(moment): GET \(target.prefix(100)) changed")
                        }
                        #expect(try Steps.batchRunCount(server) == 1, "\(moment)")
                    }
                }

                // Killed once every byte is read — while it aggregates and commits, or just after:
                // the store then holds one batch or the other, never a mix of the two.
                let lateBatch = try Executable.start(["batch", "--logs", largeLogs.path, "--data-dir", data.path, "--json"],
                                                   scratch: scratch)
                _ = try await lateBatch.waitUntilRead(logBytes, timeout: .seconds(120))
                lateBatch.signal(SIGKILL)
                _ = try await lateBatch.waitForExit(timeout: .seconds(10))
                await lateBatch.killIfRunning()
                let lateAnswers = try await withServer(dataDirectory: data, scratch: scratch) { server in
                    try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                }

                let summary = try await Steps.batch(logs: largeLogs, data: data, scratch: scratch)
                let truth = try LogTruth(logs: largeLogs)
                #expect(int(summary["counted"]) == truth.counted)
                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    let totals = try Steps.totals(server, tracks: tracks)
                    for track in tracks {
                        #expect(totals[track] == truth.plays(of: track), "track \(track) after the completed rerun")
                    }
                    for track in timelineTracks {
                        let points = try Steps.hourlyTimeline(server, track: track, hours: TestDay.hours)
                        for hour in TestDay.hours {
                            #expect(points[hour] == truth.plays(of: track, hours: hour..<(hour + 1)), "track \(track) at \(Hours.text(hour))")
                        }
                    }
                    let finalAnswers = try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                    #expect(lateAnswers == firstAnswers || lateAnswers == finalAnswers,
                            "a batch killed at its end left a mix of the old and the new counts")
                }
            }
        }

        @Test("a batch killed while splitting unpartitioned logs leaves no staging files behind once the next batch has run")
        func killedSplitLeavesNoStagingFiles() async throws {
            try await withTemporaryDirectory { scratch in
                let layoutLogs = scratch.appendingPathComponent("layout")
                let flatLogs = scratch.appendingPathComponent("flat")
                let data = scratch.appendingPathComponent("data")
                try await Steps.generate(into: layoutLogs, scratch: scratch, events: 100_000, tracks: 200, seed: 43, duplicates: 0.01)
                // One file of unknown hours: the batch splits it by hour into a staging folder first.
                try FileManager.default.createDirectory(at: flatLogs, withIntermediateDirectories: true)
                let flatFile = flatLogs.appendingPathComponent("all.ndjson")
                var everything = Data()
                for hour in 0..<24 {
                    everything += try Data(contentsOf: layoutLogs.appendingPathComponent(String(format: "2026-11-20/%02d.ndjson", hour)))
                }
                try everything.write(to: flatFile)
                let arguments = ["batch", "--logs", flatFile.path, "--data-dir", data.path, "--json",
                                 "--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]

                let fraction = Double.random(in: 0.2...0.8)
                let batch = try Executable.start(arguments, scratch: scratch)
                let reached = try await batch.waitUntilRead(Int64(Double(everything.count) * fraction), timeout: .seconds(120))
                batch.signal(SIGKILL)
                _ = try await batch.waitForExit(timeout: .seconds(10))
                await batch.killIfRunning()
                #expect(reached, "the batch ended before \(Int(fraction * 100))% of its log was read")

                let summary = try await runCounterpointJSON(arguments, scratch: scratch)
                let truth = try LogTruth(logs: flatLogs)
                #expect(int(summary["counted"]) == truth.counted)
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: data.path)
                    .filter { !$0.hasPrefix("batch.sqlite") && !$0.hasPrefix("realtime.sqlite") }
                #expect(leftovers.isEmpty, "left in the data directory after a killed and a completed batch: \(leftovers)")
            }
        }
    }
}
