import CounterpointCore
import CounterStore
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("GET /v1/tracks/{id}/plays and /v1/plays apply the merge rule", .onTestThreads)
struct TrackPlaysTests {
    @Test("all-time totals: batch in covered hours, realtime elsewhere, and the parts add up", arguments: StoreKind.allCases)
    func allTimeTotals(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let expected: [(Int64, Int64, Int64)] = [(1, 130, 13), (2, 7, 2), (3, 1, 0), (4, 0, 8), (5, 0, 8)]
            for (track, batch, realtime) in expected {
                let answer = try reader.json("/v1/tracks/\(track)/plays", as: TrackPlaysAnswer.self)
                #expect(answer == TrackPlaysAnswer(trackId: track, plays: batch + realtime, batchPlays: batch,
                                                   realtimePlays: realtime, freshness: standardFreshness))
            }
        }
    }

    @Test("a covered hour without a batch row answers 0 even when realtime has plays there", arguments: StoreKind.allCases)
    func coveredHourWithoutRowIsZero(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let seven = try reader.json("/v1/tracks/1/plays?from=\(time(7))&to=\(time(8))", as: TrackPlaysAnswer.self)
            #expect(seven.plays == 0 && seven.batchPlays == 0 && seven.realtimePlays == 0)
            let fortyOne = try reader.json("/v1/tracks/1/plays?from=\(time(40))&to=\(time(42))", as: TrackPlaysAnswer.self)
            #expect(fortyOne.plays == 0)
            let trackFour = try reader.json("/v1/tracks/4/plays?from=\(time(0))&to=\(time(10))", as: TrackPlaysAnswer.self)
            #expect(trackFour.plays == 0)
        }
    }

    @Test("from/to select hours, floored to the hour, from inclusive and to exclusive", arguments: StoreKind.allCases)
    func rangesAreRespected(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader throws in
            let plays = { (query: String) throws -> TrackPlaysAnswer in
                try reader.json("/v1/tracks/1/plays?\(query)", as: TrackPlaysAnswer.self)
            }
            #expect(try plays("from=\(time(0))&to=\(time(10))").plays == 30)
            #expect(try plays("from=\(time(5))&to=\(time(13))") == TrackPlaysAnswer(
                trackId: 1, plays: 30, batchPlays: 20, realtimePlays: 10, freshness: standardFreshness))
            // 12:59 floors to 12:00, so hour 12 is excluded; 02:30 floors to 02:00, so hour 2 is included.
            #expect(try plays("from=2026-11-20T02:30:00Z&to=2026-11-20T12:59:59.999Z").plays == 34)
            #expect(try plays("from=2026-11-20T10:00:00%2B00:00").plays == 13)
            #expect(try plays("to=\(time(0))").plays == 100)
            #expect(try plays("from=\(time(3))&to=\(time(3))").plays == 0)
            // Bounds beyond the years events may have are accepted and mean all time.
            #expect(try plays("from=1970-01-01T00:00:00Z&to=2200-01-01T00:00:00Z").plays == 143)
        }
    }

    @Test("point lookups that reach a server thread together are answered together, each with its own track's merged plays",
          arguments: StoreKind.allCases)
    func concurrentLookupsAnsweredTogether(_ store: StoreKind) throws {
        // Tracks 1...40: realtime 1 + track % 3 plays in each hour of [0, 48), batch (covering
        // [0, 24)) track % 5 plays in each even hour of it.
        let tracks = Array(Int64(1)...40)
        let covered = hours(0, 24)
        let realtime = { (track: Int64) in 1 + track % 3 }
        let batch = { (track: Int64) in track % 5 }
        try ReaderFixture.with(store, stores: { batchStore, realtimeStore in
            _ = try realtimeStore.apply(
                increments: tracks.flatMap { track in (0..<48).map { CountRow(id: track, hour: hour(Int64($0)), plays: realtime(track)) } },
                progress: [], flushedAt: standardFlushedAt)
            try batchStore.replace(range: covered, run: standardRun(covered, reasons: [:])) { writer in
                for track in tracks where batch(track) > 0 {
                    for offset in stride(from: Int64(0), to: 24, by: 2) { try writer.write(trackID: track, hour: hour(offset), plays: batch(track)) }
                }
            }
        }, configure: { $0.coalescesLookups = true }) { reader in
            // Covered only, realtime only, both, and all time, for every track, on 64 connections
            // sent at once: most reach the one server thread on the same turn.
            let ranges: [(query: String, lower: Int64, upper: Int64)] = [
                ("from=\(time(2))&to=\(time(20))", 2, 20), ("from=\(time(30))&to=\(time(40))", 30, 40),
                ("from=\(time(10))&to=\(time(40))", 10, 40), ("", -1_000, 1_000),
            ]
            func expected(_ track: Int64, _ lower: Int64, _ upper: Int64) -> (batch: Int64, realtime: Int64) {
                let batchHours = stride(from: Int64(0), to: 24, by: 2).filter { $0 >= lower && $0 < upper }.count
                let realtimeHours = (Int64(24)..<48).filter { $0 >= lower && $0 < upper }.count
                return (Int64(batchHours) * batch(track), Int64(realtimeHours) * realtime(track))
            }
            let lookups = tracks.flatMap { track in ranges.map { (track, $0) } }
            for start in stride(from: 0, to: lookups.count, by: 64) {
                let wave = lookups[start..<min(start + 64, lookups.count)]
                let clients = try wave.map { _ in try reader.client() }
                for (client, (track, range)) in zip(clients, wave) {
                    try client.send("GET /v1/tracks/\(track)/plays?\(range.query) HTTP/1.1\r\nHost: x\r\n\r\n")
                }
                for (client, (track, range)) in zip(clients, wave) {
                    var answer = try client.readResponse().decode(TrackPlaysAnswer.self)
                    #expect(answer.freshness?.batchCoveredUntil == time(24))
                    answer.freshness = nil
                    let (batchPlays, realtimePlays) = expected(track, range.lower, range.upper)
                    #expect(answer == TrackPlaysAnswer(trackId: track, plays: batchPlays + realtimePlays, batchPlays: batchPlays,
                                                       realtimePlays: realtimePlays, freshness: nil),
                            "track \(track) \(range.query)")
                }
            }
        }
    }

    @Test("a never-played track answers 0, not 404", arguments: StoreKind.allCases)
    func neverPlayedTrackIsZero(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let answer = try reader.json("/v1/tracks/9007199254740991/plays", as: TrackPlaysAnswer.self)
            #expect(answer == TrackPlaysAnswer(trackId: 9_007_199_254_740_991, plays: 0, batchPlays: 0, realtimePlays: 0,
                                               freshness: standardFreshness))
        }
    }

    @Test("/v1/plays answers in request order, with duplicates and unknown tracks as 0", arguments: StoreKind.allCases)
    func multiGetKeepsRequestOrder(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let answer = try reader.json("/v1/plays?track_id=2,99,1,2,4", as: TracksAnswer.self)
            #expect(answer.tracks.map(\.trackId) == [2, 99, 1, 2, 4])
            #expect(answer.tracks.map(\.plays) == [9, 0, 143, 9, 8])
            #expect(answer.tracks.map(\.batchPlays) == [7, 0, 130, 7, 0])
            #expect(answer.tracks.map(\.realtimePlays) == [2, 0, 13, 2, 8])
            #expect(answer.freshness == standardFreshness)

            let ranged = try reader.json("/v1/plays?track_id=1,4&from=\(time(0))&to=\(time(12))", as: TracksAnswer.self)
            #expect(ranged.tracks.map(\.plays) == [34, 0])
        }
    }

    @Test("/v1/plays accepts 1,000 ids and refuses 1,001, an empty list and a bad id", arguments: StoreKind.allCases)
    func multiGetLimits(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let thousand = (1...1_000).map(String.init).joined(separator: ",")
            let answer = try reader.json("/v1/plays?track_id=\(thousand)", as: TracksAnswer.self)
            #expect(answer.tracks.count == 1_000)
            let total = answer.tracks.reduce(Int64(0)) { $0 + $1.plays }
            #expect(total == 143 + 9 + 1 + 8 + 8)

            for (query, code) in [("track_id=\(thousand),1001", "too_many_track_ids"), ("track_id=", "missing_track_id"),
                                  ("", "missing_track_id"), ("track_id=1,,2", "invalid_track_id"),
                                  ("track_id=1,x", "invalid_track_id"), ("track_id=0", "invalid_track_id"),
                                  ("track_id=9007199254740992", "invalid_track_id"), ("track_id=-1", "invalid_track_id")] {
                let response = try reader.get("/v1/plays?\(query)")
                #expect(response.status == 400, "\(query)")
                #expect(try response.decode(ErrorAnswer.self).error.code == code, "\(query)")
            }
        }
    }

    @Test("freshness is null for both layers before anything was written, and counts are 0", arguments: StoreKind.allCases)
    func emptyStoresAnswerZeroAndNullFreshness(_ store: StoreKind) throws {
        try ReaderFixture.with(store, stores: { _, _ in }) { reader in
            let response = try reader.get("/v1/tracks/1/plays")
            #expect(response.status == 200)
            let object = try response.object()
            let freshness = try #require(object["freshness"] as? [String: Any])
            #expect(Set(freshness.keys) == ["batch_covered_until", "realtime_flushed_at", "realtime_lag_events", "replica_lag_ms"])
            #expect(freshness.values.allSatisfy { $0 is NSNull })
            #expect(object["plays"] as? Int == 0)
            #expect(try reader.json("/v1/top", as: TracksAnswer.self).tracks.isEmpty)
        }
    }

    @Test("freshness reports the lag as high watermark minus next offset, and null without watermarks", arguments: StoreKind.allCases)
    func freshnessFollowsTheRealtimeStore(_ store: StoreKind) throws {
        try ReaderFixture.with(store, stores: { _, realtime in
            _ = try realtime.apply(
                increments: [CountRow(id: 1, hour: hour(1), plays: 2)],
                progress: [PartitionProgress(topic: "plays", partition: 3, startOffset: nil, nextOffset: 7, highWatermark: nil)],
                flushedAt: 1_700_000_000_000)
        }) { reader in
            let answer = try reader.json("/v1/tracks/1/plays", as: TrackPlaysAnswer.self)
            #expect(answer.freshness == FreshnessAnswer(batchCoveredUntil: nil, realtimeFlushedAt: "2023-11-14T22:13:20.000Z",
                                                        realtimeLagEvents: nil))
            #expect(answer.plays == 2 && answer.realtimePlays == 2)
        }
    }
}
