import Foundation
import Scratch
import Testing

extension EndToEnd {
    @Suite("generated logs, batch and reader agree with counts the test computes itself")
    struct BatchAnswers {
        @Test("generate → batch → serve: totals, top, timelines and multi-get equal the test's own count of the logs")
        func answersEqualIndependentTruth() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                let generated = try await Steps.generate(into: logs, scratch: scratch, events: 200_000, tracks: 500,
                                                         seed: 20261120, duplicates: 0.02, malformed: 0.01)
                let truth = try LogTruth(logs: logs)

                // The layout batch and the archiver share: one file per hour, each hour marked closed.
                let dayFolder = try FileManager.default.contentsOfDirectory(atPath: logs.appendingPathComponent("2026-11-20").path)
                #expect(Set(dayFolder) == Set((0..<24).flatMap { [String(format: "%02d.ndjson", $0), String(format: "%02d.closed", $0)] }))

                // The generator's own account agrees with what the test reads in its files.
                #expect(int(generated["events"]) == truth.counted)
                #expect(int(generated["duplicates"]) == truth.duplicates)
                #expect(int(generated["malformed"]) == truth.rejected)
                #expect(int(generated["lines"]) == truth.linesRead)
                #expect(truth.duplicates > 0 && truth.rejected > 0 && truth.tooLarge > 0)

                let summary = try await Steps.batch(logs: logs, data: data, scratch: scratch)
                #expect(int(summary["events_read"]) == truth.linesRead)
                #expect(int(summary["valid"]) == truth.valid)
                #expect(int(summary["duplicates"]) == truth.duplicates)
                #expect(int(summary["rejected"]) == truth.rejected)
                #expect(int(summary["counted"]) == truth.counted)
                #expect(int(summary["outside_range"]) == 0)
                #expect(int(summary["tracks"]) == truth.plays.count)
                #expect(int(summary["creators"]) == truth.creatorSignals.count)
                #expect(int(summary["rows"]) == truth.rows)
                #expect(int(summary["hours"]) == 24)
                let byReason = summary["rejected_by_reason"] as? [String: Any] ?? [:]
                #expect(byReason.values.reduce(0) { $0 + int($1) } == truth.rejected)
                #expect(int(byReason["too_large"]) == truth.tooLarge)
                #expect(!(summary["rejected_sample"] as? [Any] ?? []).isEmpty)

                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    try checkTotals(server, truth)
                    try checkTrackAnswers(server, truth)
                    try checkTop(server, truth)
                    try checkTimelines(server, truth)
                    try checkCreators(server, truth)
                }
            }
        }

        /// Every creator's every signal, the creators' ranking, and the largest catalogues' tracks
        /// ranked, against the events that named each creator (SPEC §11).
        func checkCreators(_ server: Server, _ truth: LogTruth) throws {
            let signals = ["plays", "downloads", "likes", "reposts", "comments"]
            #expect(truth.creatorSignals.count > 10, "the generated logs name creators")
            for (creator, counts) in truth.creatorSignals {
                let answer = try server.json("/v1/creators/\(creator)/counts")["counts"] as? [String: [String: Any]] ?? [:]
                for signal in signals {
                    #expect(int(answer[signal]?["total"]) == counts[signal] ?? 0, "creator \(creator) \(signal)")
                }
            }
            let expected = truth.creatorSignals.map { (creator: $0.key, plays: $0.value["plays"] ?? 0) }.filter { $0.plays > 0 }
                .sorted { ($1.plays, $0.creator) < ($0.plays, $1.creator) }.prefix(20)
            let top = try server.json("/v1/creators/top?limit=20")["creators"] as? [[String: Any]] ?? []
            #expect(top.map { int64($0["creator_id"]) } == expected.map(\.creator))
            #expect(top.map { int($0["plays"]) } == expected.map(\.plays))
            for creator in expected.prefix(3).map(\.creator) {
                let tracks = try server.json("/v1/creators/\(creator)/tracks?limit=1000&signal=likes")["tracks"] as? [[String: Any]] ?? []
                let byLikes = (truth.creatorTracks[creator] ?? [:]).filter { ($0.value["likes"] ?? 0) > 0 }
                    .sorted { ($1.value["likes"]!, $0.key) < ($0.value["likes"]!, $1.key) }
                #expect(tracks.map { int64($0["track_id"]) } == byLikes.map(\.key), "creator \(creator)")
                for (entry, (track, counts)) in zip(tracks, byLikes) {
                    for signal in signals { #expect(int(entry[signal]) == counts[signal] ?? 0, "creator \(creator) track \(track) \(signal)") }
                }
            }
        }

        /// Every track's total through multi-get, in request order, with ids never played.
        func checkTotals(_ server: Server, _ truth: LogTruth) throws {
            let neverPlayed: [Int64] = [999_999, 9_007_199_254_740_991]
            var ids = truth.trackIDs + neverPlayed
            var generator = SystemRandomNumberGenerator()
            ids.shuffle(using: &generator)
            for chunk in stride(from: 0, to: ids.count, by: 400) {
                let requested = Array(ids[chunk..<min(chunk + 400, ids.count)])
                let answer = try server.json("/v1/plays?track_id=\(requested.map(String.init).joined(separator: ","))")
                let tracks = answer["tracks"] as? [[String: Any]] ?? []
                #expect(tracks.map { int64($0["track_id"]) } == requested, "multi-get keeps request order")
                for entry in tracks {
                    let track = int64(entry["track_id"])
                    #expect(int(entry["plays"]) == truth.plays(of: track), "track \(track)")
                    #expect(int(entry["batch_plays"]) == truth.plays(of: track), "track \(track)")
                    #expect(int(entry["realtime_plays"]) == 0, "track \(track)")
                }
            }
        }

        /// One track at a time, all time and over a sub-range whose bounds are floored to the hour.
        func checkTrackAnswers(_ server: Server, _ truth: LogTruth) throws {
            let sample: [Int64] = [1, 2, 3, 7, 42, 100, 250, 499, 500, 501]
            let subRange = (TestDay.firstHour + 6)..<(TestDay.firstHour + 13)
            for track in sample {
                let allTime = try server.json("/v1/tracks/\(track)/plays")
                #expect(int64(allTime["track_id"]) == track)
                #expect(int(allTime["plays"]) == truth.plays(of: track), "track \(track)")
                let freshness = allTime["freshness"] as? [String: Any]
                #expect(freshness?["batch_covered_until"] as? String == "2026-11-21T00:00:00Z")

                let part = try server.json("/v1/tracks/\(track)/plays?from=2026-11-20T06:30:00Z&to=2026-11-20T13:59:59Z")
                #expect(int(part["plays"]) == truth.plays(of: track, hours: subRange), "track \(track), 06:00–13:00")
            }
        }

        func checkTop(_ server: Server, _ truth: LogTruth) throws {
            for (query, hours, limit) in [
                ("limit=25", Int64.min..<Int64.max, 25),
                ("limit=10&from=2026-11-20T18:00:00Z&to=2026-11-20T21:00:00Z",
                 (TestDay.firstHour + 18)..<(TestDay.firstHour + 21), 10),
                ("limit=1000", Int64.min..<Int64.max, 1000),
            ] {
                let answer = try server.json("/v1/top?\(query)")
                let tracks = (answer["tracks"] as? [[String: Any]] ?? []).map { (int64($0["track_id"]), int($0["plays"])) }
                let expected = truth.top(hours: hours, limit: limit)
                #expect(tracks.map(\.0) == expected.map(\.track), "top ?\(query)")
                #expect(tracks.map(\.1) == expected.map(\.plays), "top ?\(query)")
            }
        }

        /// Hourly points zero-filled beyond the covered day (where they come from the empty
        /// realtime layer), and day buckets as sums of hours.
        func checkTimelines(_ server: Server, _ truth: LogTruth) throws {
            for track: Int64 in [1, 5, 60, 333, 777] {
                let hourly = try server.json(
                    "/v1/tracks/\(track)/timeline?step=hour&from=2026-11-19T22:00:00Z&to=2026-11-21T02:00:00Z")
                let points = hourly["points"] as? [[String: Any]] ?? []
                let hours = (TestDay.firstHour - 2)..<(TestDay.firstHour + 26)
                #expect(points.map { $0["start"] as? String ?? "" } == hours.map(Hours.text))
                for (hour, point) in zip(hours, points) {
                    #expect(int(point["plays"]) == truth.plays(of: track, hours: hour..<(hour + 1)), "track \(track) at \(Hours.text(hour))")
                    #expect(point["source"] as? String == (TestDay.hours.contains(hour) ? "batch" : "realtime"))
                }

                let daily = try server.json(
                    "/v1/tracks/\(track)/timeline?step=day&from=2026-11-19T00:00:00Z&to=2026-11-22T00:00:00Z")
                let days = daily["points"] as? [[String: Any]] ?? []
                #expect(days.map { $0["start"] as? String ?? "" }
                    == ["2026-11-19T00:00:00Z", "2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z"])
                #expect(days.map { int($0["plays"]) } == [0, truth.plays(of: track), 0], "track \(track)")
                #expect(days.map { $0["source"] as? String ?? "" } == ["realtime", "batch", "realtime"])
            }
        }
    }
}
