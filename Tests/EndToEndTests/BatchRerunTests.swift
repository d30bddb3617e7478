import Foundation
import Scratch
import Testing

extension EndToEnd {
    @Suite("re-running the batch")
    struct BatchRerun {
        @Test("re-running the same batch with --all gives identical answers, and a --from/--to batch replaces only its hours")
        func rerunIsIdenticalAndSubRangeReplacesOnlyItsHours() async throws {
            try await withTemporaryDirectory { scratch in
                let logsA = scratch.appendingPathComponent("logs-a")
                let logsB = scratch.appendingPathComponent("logs-b")
                let data = scratch.appendingPathComponent("data")
                try await Steps.generate(into: logsA, scratch: scratch, events: 40_000, tracks: 300, seed: 11, duplicates: 0.02)
                try await Steps.generate(into: logsB, scratch: scratch, events: 40_000, tracks: 300, seed: 12, duplicates: 0.02)
                let truthA = try LogTruth(logs: logsA)
                let truthB = try LogTruth(logs: logsB)
                let tracks = Array(Int64(1)...310)
                let timelineTracks: [Int64] = [1, 2, 9, 150]

                let first = try await Steps.batch(logs: logsA, data: data, scratch: scratch)
                // One reader over all three batches: it must see each new batch without a restart.
                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    let before = try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)

                    let again = try await Steps.batch(logs: logsA, data: data, scratch: scratch, extraArguments: ["--all"])
                    for key in ["events_read", "valid", "duplicates", "rejected", "counted", "tracks", "rows", "hours"] {
                        #expect(int(again[key]) == int(first[key]), "\(key) of the rerun")
                    }
                    let after = try Steps.snapshot(server, tracks: tracks, timelineTracks: timelineTracks)
                    #expect(after.keys.sorted() == before.keys.sorted())
                    for (target, body) in before {
                        #expect(after[target] == body, "GET \(target.prefix(100)) changed after an identical rerun")
                    }
                    #expect(try Steps.batchRunCount(server) == 2)

                    // Hours 06:00–12:00 are rebuilt from other logs; the rest of the day keeps the first batch.
                    let rebuilt = (TestDay.firstHour + 6)..<(TestDay.firstHour + 12)
                    let partial = try await Steps.batch(logs: logsB, data: data, scratch: scratch, extraArguments: [
                        "--from", "2026-11-20T06:00:00Z", "--to", "2026-11-20T12:00:00Z",
                    ])
                    #expect(int(partial["hours"]) == 6)
                    let expectedCounted = truthB.counted(hours: rebuilt)
                    #expect(int(partial["counted"]) == expectedCounted)

                    func expectedPlays(_ track: Int64, hour: Int64) -> Int {
                        let truth = rebuilt.contains(hour) ? truthB : truthA
                        return truth.plays(of: track, hours: hour..<(hour + 1))
                    }
                    for track in timelineTracks {
                        let points = try Steps.hourlyTimeline(server, track: track, hours: TestDay.hours)
                        for hour in TestDay.hours {
                            #expect(points[hour] == expectedPlays(track, hour: hour), "track \(track) at \(Hours.text(hour))")
                        }
                    }
                    let totals = try Steps.totals(server, tracks: tracks)
                    for track in tracks {
                        let expected = TestDay.hours.reduce(0) { $0 + expectedPlays(track, hour: $1) }
                        #expect(totals[track] == expected, "track \(track)")
                    }
                    let status = try server.json("/v1/status")
                    let coverage = (status["batch"] as? [String: Any])?["coverage"] as? [[String: Any]] ?? []
                    #expect(coverage.map { [$0["from"] as? String, $0["to"] as? String] }
                        == [["2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z"]])
                }
            }
        }
    }
}
