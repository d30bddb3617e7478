@testable import CounterStore
import CounterpointCore
import Patience
import Testing

/// Sorted access seeks from the last entry read (`batchRanked(after:)`), so ties at a chunk's
/// boundary are where it could go wrong: an entry read twice, or one skipped.
@Suite("Ranked lists seek from the last entry read, ties across chunk boundaries", .onTestThreads)
struct RankedSeekTests {
    /// 2 days, 600 tracks with plays 1…3 in the hours they play: every bucket holds runs of
    /// hundreds of tracks with equal plays, and most totals tie too.
    static let hourCount: Int64 = 48
    static let trackCount: Int64 = 600

    static func plays(track: Int64, hour: Int64) -> Int64 {
        (track + hour) % 5 == 0 ? 0 : 1 + (track * 7 + hour) % 3 / 2
    }

    /// The entries of one bucket in rank order, from the model.
    static func truth(level: RollupLevel, key: Int64) -> [RankedEntry] {
        var totals: [Int64: Int64] = [:]
        for offset in 0..<hourCount where level.key(of: hour(offset)) == key {
            for track in 1...trackCount {
                let count = plays(track: track, hour: hour(offset).index)
                if count > 0 { totals[track, default: 0] += count }
            }
        }
        return totals.map { RankedEntry(id: $0.key, plays: $0.value) }.sorted(by: RankedEntry.ranksAbove)
    }

    @Test("reading a bucket chunk by chunk gives every entry once, in rank order; top-N equals the truth",
          arguments: Backend.allCases)
    func tiesAcrossChunks(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let range = hours(0, Self.hourCount)
            try stores.batch().replace(range: range, run: batchRun(range)) { writer in
                for offset in 0..<Self.hourCount {
                    for track in 1...Self.trackCount {
                        let count = Self.plays(track: track, hour: hour(offset).index)
                        if count > 0 { try writer.write(trackID: track, hour: hour(offset), plays: count) }
                    }
                }
            }

            let layers = try stores.backend.openLayers()
            _ = try layers.beginSnapshots()
            defer { layers.endSnapshots() }
            let buckets: [(RollupLevel, Int64)] = [(.hour, hour(0).index), (.hour, hour(13).index), (.day, RollupLevel.day.key(of: hour(0))),
                                                   (.day, RollupLevel.day.key(of: hour(24))), (.month, RollupLevel.month.key(of: hour(0)))]
            for (level, key) in buckets {
                let expected = Self.truth(level: level, key: key)
                #expect(expected.count > 100)
                for firstChunk in [1, 3, 8] {
                    var list = RankedList(firstChunk: firstChunk) { (after: RankedEntry?, limit: Int) in
                        try layers.batchRanked(.track, level: level, key: key, signal: .plays, after: after, limit: limit)
                    }
                    var read: [RankedEntry] = []
                    while let entry = try list.next() { read.append(entry) }
                    #expect(read == expected, "\(level) \(key), first chunk \(firstChunk)")
                }
                // A seek from an entry in the middle of a run of ties, and from one past the end.
                let middle = expected[expected.count / 2]
                #expect(try layers.batchRanked(.track, level: level, key: key, signal: .plays, after: middle, limit: 50)
                    == Array(expected[(expected.count / 2 + 1)...].prefix(50)))
                #expect(try layers.batchRanked(.track, level: level, key: key, signal: .plays, after: expected.last, limit: 50).isEmpty)
            }

            // Rankings over ranges of several buckets, as deep as all tracks: the threshold
            // algorithm reads the lists deep, through many chunks of tied entries.
            let reader = try stores.reader()
            for (lower, upper) in [(0, 48), (0, 24), (5, 40), (13, 14)] as [(Int64, Int64)] {
                var totals: [Int64: Int64] = [:]
                for offset in lower..<upper {
                    for track in 1...Self.trackCount { totals[track, default: 0] += Self.plays(track: track, hour: hour(offset).index) }
                }
                let expected = totals.filter { $0.value > 0 }
                    .map { TrackPlays(id: $0.key, batchPlays: $0.value, realtimePlays: 0) }.sorted(by: TrackPlays.ranksAbove)
                for limit in [10, 100, 1_000] {
                    let ranked = try reader.top(in: hours(lower, upper), limit: limit)
                    #expect(ranked.map(\.id) == expected.prefix(limit).map(\.id), "top \(limit) of [\(lower), \(upper))")
                    #expect(ranked.map(\.plays) == expected.prefix(limit).map(\.plays))
                }
            }
        }
    }
}
