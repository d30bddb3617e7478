@testable import CounterStore
import CounterpointCore
import Foundation
import SQLiteDB
import Testing

/// Dimension counts in both layers — replaced with the plays by batch runs, flushed with them,
/// compacted and rolled up — against a model of the plays kept by the test, merged hour by hour.
@Suite("Dimension counts in both layers against a brute-force model")
struct DimensionStoreTests {
    struct Play: Hashable {
        var bucket: Int8?
        var client: String?
        var country: String?
    }

    /// Plays per layer, hour and track, as the test wrote them.
    struct Model {
        var batch: [Int64: [Int64: [Play]]] = [:]
        var realtime: [Int64: [Int64: [Play]]] = [:]
        var coverage = Coverage()

        func plays(track: Int64, in range: HourRange) -> [Play] {
            var plays: [Play] = []
            for hour in range.lower.index..<range.upper.index {
                let layer = coverage.contains(Hour(index: hour)) ? batch : realtime
                plays += layer[hour]?[track] ?? []
            }
            return plays
        }
    }

    static let names = ["DE", "US", "ios", "web", "", "é", "\u{1}x"]

    static func randomPlays(_ random: inout some RandomNumberGenerator) -> [Play] {
        (0..<Int.random(in: 1...6, using: &random)).map { _ in
            Play(bucket: Int.random(in: 0..<4, using: &random) == 0 ? nil : Int8.random(in: 0...99, using: &random),
                 client: Int.random(in: 0..<4, using: &random) == 0 ? nil : names.randomElement(using: &random),
                 country: Int.random(in: 0..<4, using: &random) == 0 ? nil : names.randomElement(using: &random))
        }
    }

    /// Counts and dimension rows of `plays` as an aggregation would hand them to a store.
    static func rows(_ plays: [(track: Int64, hour: Int64, play: Play)]) -> ([CountRow], [DimensionRow]) {
        var counts = PlayCounts()
        var dimensions = DimensionCounts()
        for (track, hourIndex, play) in plays {
            counts.add(trackID: track, hour: Hour(index: hourIndex))
            dimensions.add(trackID: track, hour: Hour(index: hourIndex),
                           PlayDimensions(waveformBucket: play.bucket, client: play.client.flatMap(DimensionValue.init),
                                          country: play.country.flatMap(DimensionValue.init)))
        }
        return (counts.sortedElements(), dimensions.rows())
    }

    /// What the answers must say about `plays`, worked out without the encoding.
    static func check(_ answer: TrackDimensions, _ plays: [Play], _ comment: Comment) {
        var waveform = [Int64](repeating: 0, count: 100)
        var countries: [String: Int64] = [:]
        var clients: [String: Int64] = [:]
        for play in plays {
            if let bucket = play.bucket { waveform[Int(bucket)] += 1 }
            if let client = play.client { clients[client, default: 0] += 1 }
            if let country = play.country { countries[country, default: 0] += 1 }
        }
        #expect(answer.plays.plays == Int64(plays.count), comment)
        #expect(answer.waveform == waveform, comment)
        #expect(answer.playsWithoutPosition == Int64(plays.filter { $0.bucket == nil }.count), comment)
        let expectedCountries = countries.map { ($0.key, $0.value) }.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        #expect(answer.totals.countries.map { [$0.value.string: $0.plays] } == expectedCountries.map { [$0.0: $0.1] }, comment)
        let breakdown = answer.breakdown(.client)
        #expect(breakdown.reduce(0) { $0 + $1.plays } == Int64(plays.count), comment)
        #expect(breakdown.filter { $0.value != nil }.count == clients.count, comment)
        if plays.contains(where: { $0.client == nil }) { #expect(breakdown.last?.value == nil, comment) }
    }

    @Test("merged dimension counts equal the model over random ranges, through reruns, flushes and compaction")
    func randomHistory() throws {
        try withStoreLocation { location in
            let batch = try BatchStore(location: location)
            let realtime = try RealtimeStore(location: location)
            let reader = try CounterReader(location: location)
            var model = Model()
            var random = SystemRandomNumberGenerator()
            // 2026-10-28 … 2026-11-06: crosses a month boundary, so month rollups are used.
            let origin = UTCTime.daysFromCivil(year: 2026, month: 10, day: 28) * 24
            let span: Int64 = 24 * 9
            let tracks: ClosedRange<Int64> = 1...6
            var offset: Int64 = 0
            for step in 0..<24 {
                // A realtime flush over random hours.
                var flushed: [(track: Int64, hour: Int64, play: Play)] = []
                for _ in 0..<20 {
                    let track = Int64.random(in: tracks, using: &random), hourIndex = origin + Int64.random(in: 0..<span, using: &random)
                    for play in Self.randomPlays(&random) {
                        flushed.append((track, hourIndex, play))
                        model.realtime[hourIndex, default: [:]][track, default: []].append(play)
                    }
                }
                let (counts, dimensions) = Self.rows(flushed)
                let progress = [PartitionProgress(topic: "plays", partition: 0, startOffset: step == 0 ? nil : offset,
                                                  nextOffset: offset + 1, highWatermark: nil)]
                #expect(try realtime.apply(increments: counts, dimensions: dimensions, progress: progress, flushedAt: 1) == .committed)
                offset += 1

                // Every third step a batch run (re)writes a random range; some hours of it get no rows.
                if step % 3 == 2 {
                    let lower = origin + Int64.random(in: 0..<span - 1, using: &random)
                    let range = HourRange(Hour(index: lower), Hour(index: min(origin + span, lower + Int64.random(in: 1...60, using: &random))))
                    var written: [(track: Int64, hour: Int64, play: Play)] = []
                    for hourIndex in range.lower.index..<range.upper.index { model.batch[hourIndex] = nil }
                    for _ in 0..<30 {
                        let track = Int64.random(in: tracks, using: &random)
                        let hourIndex = range.lower.index + Int64.random(in: 0..<Int64(range.count), using: &random)
                        for play in Self.randomPlays(&random) {
                            written.append((track, hourIndex, play))
                            model.batch[hourIndex, default: [:]][track, default: []].append(play)
                        }
                    }
                    // Written in two halves, so that rows for one (track, hour) arrive twice and merge.
                    let halves = [Array(written.prefix(written.count / 2)), Array(written.dropFirst(written.count / 2))]
                    try batch.replace(range: range, run: batchRun(range)) { writer in
                        for half in halves {
                            let (counts, dimensions) = Self.rows(half)
                            let byKey = Dictionary(uniqueKeysWithValues: dimensions.map { ("\($0.trackID)/\($0.hour.index)", $0.encoded) })
                            for row in counts {
                                try writer.write(trackID: row.trackID, hour: row.hour, plays: row.plays,
                                                 dimensions: byKey["\(row.trackID)/\(row.hour.index)"] ?? [])
                            }
                        }
                    }
                    model.coverage.insert(range)
                }
                if step % 4 == 3 { _ = try realtime.compactCoveredHours(maxRows: 7) }

                for _ in 0..<12 {
                    let track = Int64.random(in: tracks, using: &random)
                    let lower = origin + Int64.random(in: -5..<span, using: &random)
                    let range = HourRange(Hour(index: lower), Hour(index: lower + Int64.random(in: 0...span, using: &random)))
                    Self.check(try reader.dimensions(track: track, in: range), model.plays(track: track, in: range),
                               "step \(step), track \(track), \(range)")
                }
            }
            // The rollups hold exactly the merged hours: recomputing them from the hour table agrees.
            let database = try Database(path: location.batchPath, mode: .readOnly)
            var fromHours: [String: [UInt8]] = [:]
            try database.makeStatement("SELECT track_id, hour / 24, dimensions FROM batch_hours ORDER BY hour").forEachRow { row in
                let name = "\(row.int64(at: 0))/\(row.int64(at: 1))"
                fromHours[name] = DimensionEncoding.merged(fromHours[name] ?? [], row.bytes(at: 2))
            }
            var stored: [String: [UInt8]] = [:]
            try database.makeStatement("SELECT track_id, day, dimensions FROM batch_days").forEachRow { row in
                stored["\(row.int64(at: 0))/\(row.int64(at: 1))"] = row.bytes(at: 2)
            }
            #expect(stored.filter { !$0.value.isEmpty } == fromHours.filter { !$0.value.isEmpty })
        }
    }

    @Test("compaction deletes the dimension rows of covered hours with their counts")
    func compactionDeletesDimensions() throws {
        try withStoreLocation { location in
            let batch = try BatchStore(location: location)
            let realtime = try RealtimeStore(location: location)
            let (counts, dimensions) = Self.rows((0..<10).map { (track: 1, hour: hour($0).index, play: Play(bucket: 3, client: "ios", country: "SE")) })
            _ = try realtime.apply(increments: counts, dimensions: dimensions,
                                   progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 1, highWatermark: nil)],
                                   flushedAt: 1)
            try replace(batch, hours(0, 4), [])
            #expect(try realtime.compactCoveredHours(maxRows: 100) == 4)
            let database = try Database(path: location.realtimePath, mode: .readOnly)
            #expect(try database.makeStatement("SELECT min(hour), count(*) FROM realtime_dimensions").singleInt64() == hour(4).index)
            #expect(try database.makeStatement("SELECT count(*) FROM realtime_dimensions").singleInt64() == 6)
            // A covered hour without batch rows counts zero, dimensions included.
            let reader = try CounterReader(location: location)
            let answer = try reader.dimensions(track: 1, in: hours(0, 6))
            #expect(answer.plays.plays == 2 && answer.waveform[3] == 2 && answer.playsWithoutPosition == 0)
        }
    }
}
