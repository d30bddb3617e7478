import CounterStore
import CounterpointCore
import Foundation
import Generator
import Testing

/// Every signal of SPEC §11 through both layers of both stores: net counts with retractions
/// (negative hours included), totals with their split, timelines and rankings per signal by
/// hour, day and month, the merge rule and a batch rerun that must take the replaced hours out of the rollups. The
/// truth is summed from the events themselves, by type and weight, without the store's code.
@Suite("Every signal in both layers", .onTestThreads)
struct SignalStoreTests {
    /// One event of the model: its track, hour offset and type.
    struct ModelEvent {
        var track: Int64
        var hour: Int64
        var type: EventType
    }

    struct Key: Hashable {
        var track: Int64
        var hour: Int64
    }

    /// Net count per (track, hour offset) per signal, summed from `events` by hand.
    static func truth(_ events: [ModelEvent]) -> [Key: [Signal: Int64]] {
        var truth: [Key: [Signal: Int64]] = [:]
        for event in events {
            let weight: Int64 = ["unlike", "unrepost", "comment_deleted"].contains(event.type.name) ? -1 : 1
            let signal: Signal = switch event.type.name {
            case "play": .plays
            case "download": .downloads
            case "like", "unlike": .likes
            case "repost", "unrepost": .reposts
            default: .comments
            }
            truth[Key(track: event.track, hour: event.hour), default: [:]][signal, default: 0] += weight
        }
        return truth
    }

    /// Random events over tracks 1…12 and the hour offsets of `hours`, a third of them not plays,
    /// plus track 3's unlikes alone in hour offset `hours.lowerBound + 1` (a negative hour).
    static func events(seed: UInt64, hours: Range<Int64>, count: Int) -> [ModelEvent] {
        var random = SeededRandom(seed: seed)
        var events = (0..<count).map { _ in
            ModelEvent(track: Int64.random(in: 1...12, using: &random), hour: Int64.random(in: hours, using: &random),
                       type: Int.random(in: 0..<3, using: &random) == 0 ? EventType.allCases.randomElement(using: &random)! : .play)
        }
        events += Array(repeating: ModelEvent(track: 3, hour: hours.lowerBound + 1, type: .unlike), count: 10)
        return events
    }

    /// The rows of `events` as the writers take them: (track, hour offset, counts).
    static func rows(_ events: [ModelEvent]) -> [(Int64, Int64, SignalCounts)] {
        truth(events).map { key, signals in
            var counts = SignalCounts()
            for (signal, count) in signals { counts[signal] = count }
            return (key.track, key.hour, counts)
        }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
    }

    func writeBatch(_ store: any BatchWriter, _ range: HourRange, _ events: [ModelEvent]) throws {
        let rows = Self.rows(events)
        try store.replace(range: range, run: batchRun(range, rows: rows.count)) { writer in
            for (track, offset, counts) in rows { try writer.write(trackID: track, hour: hour(offset), counts: counts) }
        }
    }

    /// Checks every signal's totals, split and timelines of tracks 1…12 against the model:
    /// batch truth in the covered hours, realtime truth in the others.
    func check(_ reader: CounterReader, covered: Range<Int64>, batch: [ModelEvent], realtime: [ModelEvent]) throws {
        let batchTruth = Self.truth(batch.filter { covered.contains($0.hour) })
        let realtimeTruth = Self.truth(realtime.filter { !covered.contains($0.hour) })
        func sum(_ truth: [Key: [Signal: Int64]], _ track: Int64, _ range: Range<Int64>, _ signal: Signal) -> Int64 {
            truth.filter { $0.key.track == track && range.contains($0.key.hour) }.reduce(0) { $0 + ($1.value[signal] ?? 0) }
        }
        for range in [0..<96 as Range<Int64>, 5..<40, 30..<70, 47..<49] {
            for track in 1...12 as ClosedRange<Int64> {
                let counts = try reader.counts(track: track, in: hours(range.lowerBound, range.upperBound))
                for signal in Signal.allCases {
                    #expect(counts.batch[signal] == sum(batchTruth, track, range, signal), "batch \(signal) of \(track) in \(range)")
                    #expect(counts.realtime[signal] == sum(realtimeTruth, track, range, signal), "realtime \(signal) of \(track) in \(range)")
                }
                // Plays' total is what the plays route says.
                #expect(try reader.plays(track: track, in: hours(range.lowerBound, range.upperBound)).plays == counts.total.plays)
            }
        }
        // Rankings by every signal over ranges of hours, days and months: the tracks whose merged
        // net count is positive, by count descending, ties by track id.
        for range in [0..<96 as Range<Int64>, 5..<40, 30..<70, 47..<49] {
            for signal in Signal.allCases {
                var totals: [(track: Int64, count: Int64)] = []
                for track in 1...12 as ClosedRange<Int64> {
                    let count = sum(batchTruth, track, range, signal) + sum(realtimeTruth, track, range, signal)
                    if count > 0 { totals.append((track, count)) }
                }
                let expected = totals.sorted { (a: (track: Int64, count: Int64), b: (track: Int64, count: Int64)) -> Bool in
                    a.count != b.count ? a.count > b.count : a.track < b.track
                }
                for limit in [1, 4, 12] {
                    let ranked = try reader.top(in: hours(range.lowerBound, range.upperBound), limit: limit, signal: signal)
                    #expect(ranked.map { [$0.id, $0.plays] } == expected.prefix(limit).map { [$0.track, $0.count] },
                            "top \(limit) by \(signal) in \(range)")
                    #expect(ranked.allSatisfy { $0.batchPlays + $0.realtimePlays == $0.plays })
                }
            }
        }
        for track in [1, 3, 7] as [Int64] {
            for signal in Signal.allCases {
                let hourly = try reader.timeline(track: track, in: hours(0, 72), step: .hour, signal: signal)
                #expect(hourly.map(\.count) == (0..<72).map { offset in
                    sum(batchTruth, track, offset..<offset + 1, signal) + sum(realtimeTruth, track, offset..<offset + 1, signal)
                }, "hourly \(signal) of track \(track)")
                let daily = try reader.timeline(track: track, in: hours(0, 96), step: .day, signal: signal)
                #expect(daily.map(\.count) == (0..<4).map { day in
                    sum(batchTruth, track, day * 24..<day * 24 + 24, signal) + sum(realtimeTruth, track, day * 24..<day * 24 + 24, signal)
                }, "daily \(signal) of track \(track)")
            }
        }
    }

    @Test("net counts of every signal, retractions included, follow the merge rule through a batch, flushes and a rerun",
          arguments: Backend.allCases)
    func everySignalMerged(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batchEvents = Self.events(seed: 1, hours: 0..<48, count: 3_000)
            let realtimeEvents = Self.events(seed: 2, hours: 24..<72, count: 3_000)
            let negativeLikes = Self.truth(batchEvents)[Key(track: 3, hour: 1)]?[.likes] ?? 0
            #expect(negativeLikes < 0, "the model holds an hour of more unlikes than likes")

            let batch = try stores.batch()
            try writeBatch(batch, hours(0, 48), batchEvents)
            let realtime = try stores.realtime()
            let increments = Self.rows(realtimeEvents).map { CountRow(id: $0.0, hour: hour($0.1), counts: $0.2) }
            _ = try realtime.apply(increments: increments,
                                   progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 1,
                                                                highWatermark: 1)],
                                   flushedAt: 1_700_000_000_000)
            let reader = try stores.reader()
            try check(reader, covered: 0..<48, batch: batchEvents, realtime: realtimeEvents)
            #expect(try reader.counts(track: 3, in: hours(1, 2)).total.likes == negativeLikes)
            #expect(try reader.timeline(track: 3, in: hours(1, 2), step: .hour, signal: .likes).map(\.count) == [negativeLikes])

            // A rerun of the first day with other events: the old hours leave the day and month
            // rollups, every signal of them.
            let rerun = Self.events(seed: 3, hours: 0..<24, count: 800) + batchEvents.filter { $0.hour >= 24 }
            try writeBatch(batch, hours(0, 24), rerun.filter { $0.hour < 24 })
            try check(reader, covered: 0..<48, batch: rerun, realtime: realtimeEvents)
        }
    }
}
