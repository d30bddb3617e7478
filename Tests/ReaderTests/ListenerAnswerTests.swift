import CounterpointCore
import CounterStore
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("GET /v1/tracks/{id}/listeners and /v1/tracks/{id}/listeners/timeline", .onTestThreads)
struct ListenerAnswerTests {
    struct ListenersAnswer: Decodable, Equatable {
        var trackId: Int64
        var listeners: Int64
        var exact: Bool
        var plays: Int64
        var playsWithoutListener: Int64
        var freshness: FreshnessAnswer
    }

    struct TimelineAnswer: Decodable {
        struct Point: Decodable, Equatable {
            var start: String
            var listeners: Int64
            var exact: Bool
            var source: String
        }

        var trackId: Int64
        var step: String
        var points: [Point]
        var freshness: FreshnessAnswer
    }

    static func sketch(_ ids: some Sequence<Int64>) -> [UInt8] { HyperLogLog(listenerIDs: ids).encoded }

    /// Batch coverage [D+0h, D+24h): track 1 has listeners 1–10 at hour 2 (plus 2 plays without a
    /// listener) and 6–20 at hour 30 of a second run over [D+24h, D+48h); realtime: listeners
    /// 15–40 at hour 50 and, in covered hour 3, listeners 100–199 that are never read. Track 2
    /// has 1,000 listeners in one hour (an estimate).
    ///
    /// Track 1 over all time: listeners 1–40 → 40, exact; plays 12 + 15 + 26 = 53, 2 without.
    static func stores(_ batch: any BatchWriter, _ realtime: any RealtimeWriter) throws {
        try batch.replace(range: hours(0, 24), run: standardRun(hours(0, 24), reasons: [:])) { writer in
            try writer.write(trackID: 1, hour: hour(2), plays: 12, listenerPlays: 10, listeners: sketch(1...10))
            try writer.write(trackID: 2, hour: hour(5), plays: 1_000, listenerPlays: 1_000, listeners: sketch(1...1_000))
        }
        try batch.replace(range: hours(24, 48), run: standardRun(hours(24, 48), reasons: [:])) { writer in
            try writer.write(trackID: 1, hour: hour(30), plays: 15, listenerPlays: 15, listeners: sketch(6...20))
        }
        _ = try realtime.apply(
            increments: [CountRow(id: 1, hour: hour(3), plays: 100), CountRow(id: 1, hour: hour(50), plays: 26)],
            listeners: [EncodedRow(id: 1, hour: hour(3), value: 100, encoded: sketch(100...199)),
                        EncodedRow(id: 1, hour: hour(50), value: 26, encoded: sketch(15...40))],
            progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 10, highWatermark: 10)],
            flushedAt: standardFlushedAt)
    }

    @Test("a total unites the batch sketches of covered hours and the realtime ones of the others, exact while small",
          arguments: StoreKind.allCases)
    func totals(_ store: StoreKind) throws {
        try ReaderFixture.with(store, stores: Self.stores) { reader in
            let all = try reader.json("/v1/tracks/1/listeners", as: ListenersAnswer.self)
            #expect(all.trackId == 1 && all.listeners == 40 && all.exact)
            #expect(all.plays == 53 && all.playsWithoutListener == 2)
            #expect(all.freshness.batchCoveredUntil == time(48))
            let covered = try reader.json("/v1/tracks/1/listeners?from=\(time(0))&to=\(time(48))", as: ListenersAnswer.self)
            #expect(covered.listeners == 20 && covered.plays == 27)
            let estimate = try reader.json("/v1/tracks/2/listeners", as: ListenersAnswer.self)
            #expect(!estimate.exact && abs(estimate.listeners - 1_000) <= 65)
            let never = try reader.json("/v1/tracks/77/listeners", as: ListenersAnswer.self)
            #expect(never.listeners == 0 && never.exact && never.plays == 0 && never.playsWithoutListener == 0)
        }
    }

    @Test("a day timeline gives each day its distinct listeners, zero-filled, with its source", arguments: StoreKind.allCases)
    func dayTimeline(_ store: StoreKind) throws {
        try ReaderFixture.with(store, stores: Self.stores) { reader in
            let answer = try reader.json("/v1/tracks/1/listeners/timeline?from=\(time(0))&to=\(time(96))&step=day",
                                         as: TimelineAnswer.self)
            typealias Point = TimelineAnswer.Point
            #expect(answer.step == "day")
            #expect(answer.points == [
                Point(start: time(0), listeners: 10, exact: true, source: "batch"),
                Point(start: time(24), listeners: 15, exact: true, source: "batch"),
                Point(start: time(48), listeners: 26, exact: true, source: "realtime"),
                Point(start: time(72), listeners: 0, exact: true, source: "realtime"),
            ])
            let hourly = try reader.json("/v1/tracks/1/listeners/timeline?from=\(time(2))&to=\(time(4))", as: TimelineAnswer.self)
            #expect(hourly.points.map(\.listeners) == [10, 0])
        }
    }

    @Test("a bad range or step is 400 as for timelines; a damaged sketch is 500 for its answer only", arguments: StoreKind.allCases)
    func errors(_ store: StoreKind) throws {
        let damaged: (any BatchWriter, any RealtimeWriter) throws -> Void = { batch, realtime in
            try Self.stores(batch, realtime)
            try batch.replace(range: hours(100, 101), run: standardRun(hours(100, 101), reasons: [:])) { writer in
                try writer.write(trackID: 9, hour: hour(100), plays: 1, listenerPlays: 1, listeners: [0x12, 0x8C, 0x7F, 0])
            }
        }
        try ReaderFixture.with(store, stores: damaged) { reader in
            for (target, code) in [
                ("/v1/tracks/1/listeners?from=\(time(5))&to=\(time(4))", "invalid_range"),
                ("/v1/tracks/1/listeners/timeline?from=\(time(5))&to=\(time(4))", "invalid_range"),
                ("/v1/tracks/1/listeners/timeline?step=week", "invalid_step"),
                ("/v1/tracks/1/listeners?step=day", "unknown_parameter"),
                ("/v1/tracks/0/listeners", "invalid_track_id"),
            ] {
                let response = try reader.get(target)
                #expect(response.status == 400, "\(target)")
                #expect(try response.decode(ErrorAnswer.self).error.code == code, "\(target)")
            }
            let broken = try reader.get("/v1/tracks/9/listeners")
            #expect(broken.status == 500)
            #expect(try broken.decode(ErrorAnswer.self).error.code == "damaged_data")
            #expect(try reader.get("/v1/tracks/9/listeners/timeline?from=\(time(100))&to=\(time(101))").status == 500)
            #expect(try reader.json("/v1/tracks/9/plays", as: TrackPlaysAnswer.self).plays == 1)
            #expect(try reader.json("/v1/tracks/1/listeners", as: ListenersAnswer.self).listeners == 40)
        }
    }
}
