import CounterpointCore
import CounterStore
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("GET /v1/tracks/{id}/timeline and /v1/top", .onTestThreads)
struct TimelineAndTopTests {
    typealias Point = TimelineAnswer.Point

    @Test("hour buckets are zero-filled and say batch for covered hours and realtime for the others", arguments: StoreKind.allCases)
    func hourBuckets(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let answer = try reader.json("/v1/tracks/1/timeline?from=\(time(4))&to=\(time(13))", as: TimelineAnswer.self)
            #expect(answer.trackId == 1 && answer.step == "hour")
            #expect(answer.from == time(4) && answer.to == time(13))
            #expect(answer.points == [
                Point(start: time(4), plays: 0, source: "batch"),
                Point(start: time(5), plays: 20, source: "batch"),
                Point(start: time(6), plays: 0, source: "batch"),
                Point(start: time(7), plays: 0, source: "batch"),      // realtime 555 is not read
                Point(start: time(8), plays: 0, source: "batch"),
                Point(start: time(9), plays: 0, source: "batch"),
                Point(start: time(10), plays: 4, source: "realtime"),
                Point(start: time(11), plays: 0, source: "realtime"),
                Point(start: time(12), plays: 6, source: "realtime"),
            ])
            #expect(answer.freshness == standardFreshness)
            let total = try reader.json("/v1/tracks/1/plays?from=\(time(4))&to=\(time(13))", as: TrackPlaysAnswer.self)
            #expect(answer.points.reduce(0) { $0 + $1.plays } == total.plays)
        }
    }

    @Test("day buckets sum merged hours per UTC day: batch, mixed when partly covered, realtime when not at all", arguments: StoreKind.allCases)
    func dayBuckets(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let answer = try reader.json("/v1/tracks/1/timeline?from=\(time(-24))&to=\(time(72))&step=day",
                                         as: TimelineAnswer.self)
            #expect(answer.step == "day")
            #expect(answer.points == [
                Point(start: time(-24), plays: 100, source: "batch"),
                Point(start: time(0), plays: 40, source: "mixed"),
                Point(start: time(24), plays: 3, source: "mixed"),      // hours 40–41 covered, 77 not read
                Point(start: time(48), plays: 0, source: "realtime"),
            ])
        }
    }

    @Test("step=day widens the range to whole UTC days", arguments: StoreKind.allCases)
    func dayStepWidensToWholeDays(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let answer = try reader.json("/v1/tracks/1/timeline?from=\(time(5))&to=\(time(30))&step=day",
                                         as: TimelineAnswer.self)
            #expect(answer.from == time(0) && answer.to == time(48))
            #expect(answer.points == [
                Point(start: time(0), plays: 40, source: "mixed"),
                Point(start: time(24), plays: 3, source: "mixed"),
            ])
            let aligned = try reader.json("/v1/tracks/2/timeline?from=\(time(0))&to=\(time(24))&step=day",
                                          as: TimelineAnswer.self)
            #expect(aligned.from == time(0) && aligned.to == time(24))
            #expect(aligned.points == [Point(start: time(0), plays: 9, source: "mixed")])
        }
    }

    @Test("without from/to a timeline covers the last 7 days by hour, or the last 90 days by day, up to the current hour", arguments: StoreKind.allCases)
    func defaultWindows(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            // now is 2026-11-20T12:30Z: the current hour is 12.
            let hourly = try reader.json("/v1/tracks/1/timeline", as: TimelineAnswer.self)
            #expect(hourly.from == time(13 - 168) && hourly.to == time(13))
            #expect(hourly.points.count == 168)
            #expect(hourly.points.first?.start == time(13 - 168))
            #expect(hourly.points.last == Point(start: time(12), plays: 6, source: "realtime"))
            #expect(hourly.points.reduce(0) { $0 + $1.plays } == 100 + 30 + 4 + 6)

            let daily = try reader.json("/v1/tracks/1/timeline?step=day", as: TimelineAnswer.self)
            #expect(daily.from == time(-90 * 24) && daily.to == time(24))
            #expect(daily.points.count == 91)
            #expect(daily.points.last == Point(start: time(0), plays: 40, source: "mixed"))

            let onlyFrom = try reader.json("/v1/tracks/1/timeline?from=\(time(10))", as: TimelineAnswer.self)
            #expect(onlyFrom.to == time(13) && onlyFrom.points.count == 3)
        }
    }

    @Test("a timeline may hold exactly 10,000 buckets; 10,001 is 400 range_too_large", arguments: StoreKind.allCases)
    func bucketLimit(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let hourly = try reader.json("/v1/tracks/1/timeline?from=\(time(0))&to=\(time(10_000))", as: TimelineAnswer.self)
            #expect(hourly.points.count == 10_000)
            #expect(hourly.points.reduce(0) { $0 + $1.plays } == 30 + 13)

            let daily = try reader.json("/v1/tracks/1/timeline?from=\(time(0))&to=\(time(240_000))&step=day",
                                        as: TimelineAnswer.self)
            #expect(daily.points.count == 10_000)

            for target in ["/v1/tracks/1/timeline?from=\(time(0))&to=\(time(10_001))",
                           "/v1/tracks/1/timeline?from=\(time(0))&to=\(time(240_001))&step=day",
                           "/v1/tracks/1/timeline?from=2000-01-01T00:00:00Z&to=2099-12-31T00:00:00Z"] {
                let response = try reader.get(target)
                #expect(response.status == 400, "\(target)")
                #expect(try response.decode(ErrorAnswer.self).error.code == "range_too_large", "\(target)")
            }
        }
    }

    @Test("top ranks by merged plays, ties by ascending track id, and leaves out tracks without plays", arguments: StoreKind.allCases)
    func topOrdering(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let all = try reader.json("/v1/top", as: TracksAnswer.self)
            #expect(all.tracks.map(\.trackId) == [1, 2, 4, 5, 3])
            #expect(all.tracks.map(\.plays) == [143, 9, 8, 8, 1])
            #expect(all.tracks.allSatisfy { $0.plays == $0.batchPlays + $0.realtimePlays })
            #expect(all.freshness == standardFreshness)

            let covered = try reader.json("/v1/top?from=\(time(0))&to=\(time(10))", as: TracksAnswer.self)
            #expect(covered.tracks.map(\.trackId) == [1, 2, 3])
            #expect(covered.tracks.map(\.plays) == [30, 7, 1])

            let later = try reader.json("/v1/top?from=\(time(10))&to=\(time(24))", as: TracksAnswer.self)
            #expect(later.tracks.map(\.trackId) == [1, 4, 5, 2])
            #expect(later.tracks.map(\.plays) == [10, 8, 8, 2])

            let two = try reader.json("/v1/top?limit=2", as: TracksAnswer.self)
            #expect(two.tracks.map(\.trackId) == [1, 2])
            let third = try reader.json("/v1/top?limit=3&from=\(time(10))&to=\(time(24))", as: TracksAnswer.self)
            #expect(third.tracks.map(\.trackId) == [1, 4, 5])
            // A tie at the cut keeps the lower track id.
            let cut = try reader.json("/v1/top?limit=2&from=\(time(10))&to=\(time(24))", as: TracksAnswer.self)
            #expect(cut.tracks.map(\.trackId) == [1, 4])
        }
    }

    @Test("top takes limit 1 to 1,000 and refuses other values", arguments: StoreKind.allCases)
    func topLimitBounds(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            #expect(try reader.json("/v1/top?limit=1", as: TracksAnswer.self).tracks.map(\.trackId) == [1])
            #expect(try reader.json("/v1/top?limit=1000", as: TracksAnswer.self).tracks.count == 5)
            for limit in ["0", "1001", "-1", "abc", "", "+5", "1e2", "99999999999999999999"] {
                let response = try reader.get("/v1/top?limit=\(limit)")
                #expect(response.status == 400, "limit=\(limit)")
                #expect(try response.decode(ErrorAnswer.self).error.code == "invalid_limit", "limit=\(limit)")
            }
        }
    }
}
