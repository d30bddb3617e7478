import CounterStore
import CounterpointCore
import Patience
import Testing

/// The merge rule of docs/architecture.md on every kind of query: a covered hour counts its batch plays
/// (0 without a batch row, whatever the realtime layer says), any other hour its realtime plays.
@Suite("Merge rule in every query", .onTestThreads)
struct MergeRuleTests {
    /// Day 0 hours 0..<12 covered by the batch; realtime counted the whole day and day 1.
    /// Track 1: batch 10 at hour 3; realtime 1 at hours 3, 4 (covered, so ignored) and 2 at 13, 30.
    /// Track 2: realtime 7 at hour 5 only (covered without a batch row: counts 0) and 1 at 20.
    /// Track 3: batch 4 at hour 11; nothing else.
    func makeStore(_ stores: TestStores) throws -> CounterReader {
        let realtime = try stores.realtime()
        try flush(realtime, [(1, 3, 1), (1, 4, 1), (1, 13, 2), (1, 30, 2), (2, 5, 7), (2, 20, 1)], from: nil, to: 6,
                  highWatermark: 10, at: 5_000)
        let batch = try stores.batch()
        try replace(batch, hours(0, 12), [(1, 3, 10), (3, 11, 4)])
        return try stores.reader()
    }

    @Test("totals take batch plays in covered hours and realtime plays elsewhere", arguments: Backend.allCases)
    func totals(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let reader = try makeStore(stores)
            #expect(try reader.plays(track: 1, in: .allTime) == TrackPlays(id: 1, batchPlays: 10, realtimePlays: 4))
            #expect(try reader.plays(track: 2, in: .allTime) == TrackPlays(id: 2, batchPlays: 0, realtimePlays: 1))
            #expect(try reader.plays(track: 2, in: hours(5, 6)).plays == 0)
            #expect(try reader.plays(track: 3, in: hours(11, 13)) == TrackPlays(id: 3, batchPlays: 4, realtimePlays: 0))
            #expect(try reader.plays(track: 1, in: hours(13, 14)) == TrackPlays(id: 1, batchPlays: 0, realtimePlays: 2))
            #expect(try reader.plays(track: 99, in: .allTime) == TrackPlays(id: 99, batchPlays: 0, realtimePlays: 0))
        }
    }

    @Test("several tracks answer in request order, duplicates included, with the same rule", arguments: Backend.allCases)
    func severalTracks(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let reader = try makeStore(stores)
            let answers = try reader.plays(tracks: [3, 1, 99, 2, 1], in: .allTime)
            #expect(answers.map(\.id) == [3, 1, 99, 2, 1])
            #expect(answers.map(\.plays) == [4, 14, 0, 1, 14])
            #expect(answers[1] == TrackPlays(id: 1, batchPlays: 10, realtimePlays: 4))
            #expect(try reader.plays(tracks: [], in: .allTime).isEmpty)
        }
    }

    @Test("coverage with several gaps in the range is applied gap by gap", arguments: Backend.allCases)
    func severalGaps(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let realtime = try stores.realtime()
            try flush(realtime, (0..<Int64(10)).map { (1, $0, Int64(1)) }, from: nil, to: 1)
            let batch = try stores.batch()
            try replace(batch, hours(2, 3), [(1, 2, 100)])
            try replace(batch, hours(5, 6), [])
            try replace(batch, hours(8, 9), [(1, 8, 50)])
            let reader = try stores.reader()
            // Uncovered: 0,1,3,4,6,7,9 → 7 realtime plays; covered: 100 + 0 + 50.
            #expect(try reader.plays(track: 1, in: hours(0, 10)) == TrackPlays(id: 1, batchPlays: 150, realtimePlays: 7))
            #expect(try reader.plays(tracks: [1], in: hours(0, 10)).first?.plays == 157)
            #expect(try reader.timeline(track: 1, in: hours(0, 10), step: .hour).map(\.count) == [1, 1, 100, 1, 1, 0, 1, 1, 50, 1])
            #expect(try reader.top(in: hours(0, 10), limit: 1).first?.plays == 157)
        }
    }

    @Test("an hourly timeline is zero-filled and says which layer each hour came from", arguments: Backend.allCases)
    func hourlyTimeline(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let reader = try makeStore(stores)
            let points = try reader.timeline(track: 2, in: hours(4, 14), step: .hour)
            #expect(points.map(\.start) == (4..<14).map { hour($0) })
            #expect(points.map(\.count) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            #expect(points.map(\.source) == Array(repeating: .batch, count: 8) + [.realtime, .realtime])

            let track1 = try reader.timeline(track: 1, in: hours(2, 14), step: .hour)
            #expect(track1.map(\.count) == [0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2])
        }
    }

    @Test("a day partly covered is a mixed bucket summing batch and realtime hours", arguments: Backend.allCases)
    func dailyTimeline(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let reader = try makeStore(stores)
            let points = try reader.timeline(track: 1, in: hours(0, 72), step: .day)
            #expect(points == [
                TimelinePoint(start: hour(0), count: 12, source: .mixed),
                TimelinePoint(start: hour(24), count: 2, source: .realtime),
                TimelinePoint(start: hour(48), count: 0, source: .realtime),
            ])
            // Only covered hours of a day inside the range: batch.
            let covered = try reader.timeline(track: 2, in: hours(1, 12), step: .day)
            #expect(covered == [TimelinePoint(start: hour(0), count: 0, source: .batch)])
            // A range starting mid-day: the first bucket starts at the day and counts hours in range.
            let partial = try reader.timeline(track: 1, in: hours(4, 31), step: .day)
            #expect(partial == [TimelinePoint(start: hour(0), count: 2, source: .mixed),
                                TimelinePoint(start: hour(24), count: 2, source: .realtime)])
            #expect(try reader.timeline(track: 1, in: hours(5, 5), step: .day).isEmpty)
        }
    }

    @Test("the ranking sums merged hours, breaks ties by track id and leaves out tracks without plays", arguments: Backend.allCases)
    func ranking(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let reader = try makeStore(stores)
            #expect(try reader.top(in: .allTime, limit: 10) == [
                TrackPlays(id: 1, batchPlays: 10, realtimePlays: 4),
                TrackPlays(id: 3, batchPlays: 4, realtimePlays: 0),
                TrackPlays(id: 2, batchPlays: 0, realtimePlays: 1),
            ])
            // Track 2's 7 realtime plays at hour 5 are covered and count 0: it is left out.
            #expect(try reader.top(in: hours(0, 12), limit: 10).map(\.id) == [1, 3])
            #expect(try reader.top(in: hours(0, 12), limit: 1).map(\.id) == [1])
            #expect(try reader.top(in: hours(0, 12), limit: 0).isEmpty)

            let realtime = try stores.realtime()
            try flush(realtime, [(7, 40, 5), (5, 40, 5), (6, 40, 5), (4, 40, 1)], from: 6, to: 8)
            #expect(try reader.top(in: hours(40, 41), limit: 2).map(\.id) == [5, 6])
        }
    }

    @Test("many tracks looked up at once get each track's merged plays, in request order, over every shape of range",
          arguments: Backend.allCases)
    func manyTracksAtOnce(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let tracks = Array(Int64(1)...Int64(30))
            var realtimeRows: [(Int64, Int64, Int64)] = []
            var batchRows: [(Int64, Int64, Int64)] = []
            for track in tracks {
                for offset in Int64(0)..<100 where (track * 3 + offset) % 4 != 0 {
                    realtimeRows.append((track, offset, (track + offset) % 7 + 1))
                }
                for offset in Int64(20)..<40 { batchRows.append((track, offset, track % 5 + 1)) }
                batchRows.append((track, 65, 31 - track))
            }
            let covered = [hours(20, 40), hours(60, 70)]
            try flush(try stores.realtime(), realtimeRows, from: nil, to: 1)
            let batch = try stores.batch()
            try replace(batch, covered[0], batchRows.filter { covered[0].contains(hour($0.1)) })
            try replace(batch, covered[1], batchRows.filter { covered[1].contains(hour($0.1)) })
            // The merge rule over the rows written, apart from the stores.
            func truth(_ track: Int64, _ range: HourRange) -> (batch: Int64, realtime: Int64) {
                let isCovered = { (offset: Int64) in covered.contains { $0.contains(hour(offset)) } }
                let batch = batchRows.filter { $0.0 == track && range.contains(hour($0.1)) }.reduce(0) { $0 + $1.2 }
                let realtime = realtimeRows.filter { $0.0 == track && range.contains(hour($0.1)) && !isCovered($0.1) }.reduce(0) { $0 + $1.2 }
                return (batch, realtime)
            }
            let reader = try stores.reader()
            let asked: [Int64] = [7, 1, 999, 30, 7] + tracks
            // Realtime only; batch only; one batch part and realtime gaps; two batch parts; everything.
            for range in [hours(0, 20), hours(25, 38), hours(30, 50), hours(10, 90), .allTime] {
                let answers = try reader.plays(tracks: asked, in: range)
                #expect(answers.map(\.id) == asked)
                for answer in answers {
                    let expected = truth(answer.id, range)
                    #expect(answer == TrackPlays(id: answer.id, batchPlays: expected.batch, realtimePlays: expected.realtime),
                            "track \(answer.id) over \(range)")
                    #expect(try reader.plays(track: answer.id, in: range) == answer)
                }
            }
        }
    }

    @Test("the ranking agrees with per-track totals over narrow and wide ranges", arguments: Backend.allCases)
    func rankingAgreesWithTotals(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let realtime = try stores.realtime()
            let batch = try stores.batch()
            let tracks = Array(Int64(1)...Int64(30))
            try flush(realtime, tracks.flatMap { track in (0..<Int64(100)).compactMap { offset in
                (track * 7 + offset) % 5 == 0 ? nil : (track, offset, (track * offset) % 9 + 1)
            } }, from: nil, to: 1)
            try replace(batch, hours(20, 40), tracks.flatMap { track in (20..<Int64(40)).map { (track, $0, track % 4) } })
            try replace(batch, hours(60, 70), tracks.map { ($0, 65, 31 - $0) })
            let reader = try stores.reader()
            for range in [hours(0, 1), hours(35, 36), hours(30, 45), hours(10, 90), .allTime] {
                let expected = try reader.plays(tracks: tracks, in: range)
                    .filter { $0.plays > 0 }
                    .sorted { $0.plays != $1.plays ? $0.plays > $1.plays : $0.id < $1.id }
                #expect(try reader.top(in: range, limit: 1_000) == expected)
                #expect(try reader.top(in: range, limit: 5) == Array(expected.prefix(5)))
            }
        }
    }

    @Test("freshness reports coverage, last flush and lag, also alongside every count query", arguments: Backend.allCases)
    func freshness(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let reader = try makeStore(stores)
            let expected = Freshness(batchCoveredUntil: hour(12), realtimeFlushedAt: 5_000, realtimeLagEvents: 4)
            #expect(try reader.freshness() == expected)
            _ = try reader.plays(track: 1, in: .allTime)
            #expect(reader.lastFreshness == expected)

            let realtime = try stores.realtime()
            try flush(realtime, [(1, 30, 1)], from: 6, to: 9, highWatermark: 9, at: 6_000)
            for query in [{ _ = try reader.plays(track: 1, in: hours(0, 12)) },
                          { _ = try reader.plays(tracks: [1], in: .allTime) },
                          { _ = try reader.timeline(track: 1, in: hours(0, 48), step: .day) },
                          { _ = try reader.top(in: .allTime, limit: 3) }] as [() throws -> Void] {
                try query()
                #expect(reader.lastFreshness == Freshness(batchCoveredUntil: hour(12), realtimeFlushedAt: 6_000, realtimeLagEvents: 0))
            }
        }
    }
}
