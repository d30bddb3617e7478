import Foundation
import Testing

extension EndToEnd {
    @Suite("a batch killed mid-run")
    struct KilledBatch {
        @Test("a batch killed with SIGKILL mid-run leaves the previous batch's counts intact, and a rerun applies")
        func killedBatchLeavesPreviousCounts() async throws {
            try await withTemporaryDirectory { scratch in
                let smallLogs = scratch.appendingPathComponent("logs-small")
                let largeLogs = scratch.appendingPathComponent("logs-large")
                let data = scratch.appendingPathComponent("data")
                try await Steps.generate(into: smallLogs, scratch: scratch, events: 20_000, tracks: 400, seed: 41)
                // Large enough that the debug build needs several seconds, so that a kill within
                // 1.5 s of the start lands while it runs.
                try await Steps.generate(into: largeLogs, scratch: scratch, events: 300_000, tracks: 400, seed: 42,
                                         duplicates: 0.01, malformed: 0.001)
                let tracks = Array(Int64(1)...400)
                let timelineTracks: [Int64] = [1, 3, 77]
                try await Steps.batch(logs: smallLogs, data: data, scratch: scratch)
                let firstAnswers = try await withServer(dataDirectory: data, scratch: scratch) { server in
                    try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                }

                var random = SystemRandomNumberGenerator()
                for attempt in 1...2 {
                    let delay = Int.random(in: 200...1_500, using: &random)
                    let batch = try RunningCommand(["batch", "--logs", largeLogs.path, "--data-dir", data.path, "--json"],
                                                   scratch: scratch)
                    try await Task.sleep(for: .milliseconds(delay))
                    #expect(batch.isRunning, "attempt \(attempt): the large batch ended within \(delay) ms; it must be larger")
                    batch.signal(SIGKILL)
                    let killed = try await batch.waitForExit(timeout: .seconds(10))
                    await batch.killIfRunning()
                    #expect(killed?.exited == false && killed?.status == SIGKILL, "attempt \(attempt) after \(delay) ms")

                    try await withServer(dataDirectory: data, scratch: scratch) { server in
                        let answers = try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                        for (target, body) in firstAnswers where answers[target] != body {
                            Issue.record("attempt \(attempt), killed after \(delay) ms: GET \(target.prefix(100)) changed")
                        }
                        #expect(try Steps.batchRunCount(server) == 1)
                    }
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
                    #expect(try Steps.batchRunCount(server) == 2)
                }
            }
        }
    }
}
