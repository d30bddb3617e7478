import CounterpointCore
import CounterStore
import Foundation
import Testing

@Suite("Reader top-N ranking reuse")
struct TopRankingCacheTests {
    /// New realtime plays that make track 3 the most played of all time (+1,000).
    static func promoteTrack3(_ fixture: ReaderFixture) throws {
        let realtime = try RealtimeStore(location: fixture.location)
        let progress = try realtime.storedOffsets(topic: "plays").map { partition, offset in
            PartitionProgress(topic: "plays", partition: partition, startOffset: offset, nextOffset: offset + 1,
                              highWatermark: offset + 1)
        }
        let outcome = try realtime.apply(increments: [CountIncrement(trackID: 3, hour: hour(20), plays: 1_000)],
                                         progress: progress, flushedAt: standardFlushedAt + 60_000)
        #expect(outcome == .committed)
    }

    @Test("a ranking is reused for its age, for any limit, with the freshness it was computed with")
    func rankingIsReused() throws {
        try ReaderFixture.with(configure: { $0.topRankingAge = .seconds(600); $0.snapshotAge = .zero }) { fixture in
            let first = try fixture.json("/v1/top?limit=2", as: TracksAnswer.self)
            #expect(first.tracks.map(\.trackId) == [1, 2])
            try Self.promoteTrack3(fixture)
            // Every thread answers from the one ranking: the old order, any prefix of it, and the
            // old freshness, which tells the dashboard how current the answer is.
            for limit in [1, 2, 5, 1_000] {
                let again = try fixture.json("/v1/top?limit=\(limit)", as: TracksAnswer.self)
                #expect(again.tracks.map(\.trackId) == Array([1, 2, 4, 5, 3].prefix(limit)))
                #expect(again.freshness == first.freshness)
            }
            // Another range is ranked afresh.
            let other = try fixture.json("/v1/top?limit=1&from=\(time(10))", as: TracksAnswer.self)
            #expect(other.tracks.map(\.trackId) == [3])
            #expect(other.tracks.first?.plays == 1_000)
        }
    }

    @Test("an expired ranking is answered once more while the background thread ranks again, then replaced")
    func expiredRankingIsRecomputed() throws {
        try ReaderFixture.with(configure: { $0.topRankingAge = .milliseconds(50); $0.snapshotAge = .zero }) { fixture in
            #expect(try fixture.json("/v1/top?limit=1", as: TracksAnswer.self).tracks.map(\.trackId) == [1])
            try Self.promoteTrack3(fixture)
            Thread.sleep(forTimeInterval: 0.2)
            // The first request after expiry is answered from the old ranking at once and hands the
            // new ranking to the background thread; a later request sees it.
            #expect(try fixture.json("/v1/top?limit=1", as: TracksAnswer.self).tracks.map(\.trackId) == [1])
            var answer = try fixture.json("/v1/top?limit=1", as: TracksAnswer.self)
            for _ in 0..<50 where answer.tracks.first?.trackId != 3 {
                Thread.sleep(forTimeInterval: 0.02)
                answer = try fixture.json("/v1/top?limit=1", as: TracksAnswer.self)
            }
            #expect(answer.tracks.map(\.trackId) == [3])
            #expect(answer.tracks.first?.plays == 1_001)
        }
    }

    @Test("with a zero age every request ranks afresh (the library default)")
    func zeroAgeRanksEveryTime() throws {
        try ReaderFixture.with(configure: { $0.snapshotAge = .zero }) { fixture in
            #expect(try fixture.json("/v1/top?limit=1", as: TracksAnswer.self).tracks.map(\.trackId) == [1])
            try Self.promoteTrack3(fixture)
            #expect(try fixture.json("/v1/top?limit=1", as: TracksAnswer.self).tracks.map(\.trackId) == [3])
        }
    }
}
