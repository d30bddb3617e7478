@testable import CounterStore
import CoreTestSupport
import CounterpointCore
import Foundation
import Generator
import Patience
import SQLiteDB
import Testing

/// The day and month rollups and the rankings over them, against a model of both layers kept by
/// the test: every answer is recomputed hour by hour from the model with the merge rule.
@Suite("Rollups and rankings against a brute-force model", .onTestThreads)
struct RollupTests {
    /// Both layers as the test wrote them, per (track, hour).
    struct Model {
        var batch: [Int64: [Int64: Int64]] = [:]     // hour → track → plays
        var realtime: [Int64: [Int64: Int64]] = [:]  // hour → track → plays
        var coverage = Coverage()

        func plays(track: Int64, hour: Int64) -> Int64 {
            MergeRule.plays(covered: coverage.contains(Hour(index: hour)),
                            batch: batch[hour]?[track], realtime: realtime[hour]?[track])
        }

        var hours: [Int64] { Array(Set(batch.keys).union(realtime.keys)).sorted() }

        func total(track: Int64, in range: HourRange) -> Int64 {
            hours.filter { range.contains(Hour(index: $0)) }.reduce(0) { $0 + plays(track: track, hour: $1) }
        }

        func top(in range: HourRange, limit: Int) -> [Int64: Int64] {
            var totals: [Int64: Int64] = [:]
            for hour in hours where range.contains(Hour(index: hour)) {
                let tracks = Set((batch[hour] ?? [:]).keys).union((realtime[hour] ?? [:]).keys)
                for track in tracks { totals[track, default: 0] += plays(track: track, hour: hour) }
            }
            return totals.filter { $0.value > 0 }
        }
    }

    /// 2026-10-20T00:00Z: the random history crosses the October/November month boundary.
    static let origin: Int64 = UTCTime.daysFromCivil(year: 2026, month: 10, day: 20) * 24

    @Test("totals, day timelines and top-N equal the model after random batch runs and flushes",
          arguments: Backend.allCases, [1, 2, 3] as [UInt64])
    func randomHistory(backend: Backend, seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        try withStores(backend) { stores in
            let batch = try stores.batch()
            let realtime = try stores.realtime()
            let reader = try stores.reader()
            var model = Model()
            var nextOffset: Int64 = 0
            let span: Int64 = 24 * 40

            for step in 0..<14 {
                if step % 2 == 0 {
                    // A batch run over a random range: whole days or ragged hours.
                    let lower = Self.origin + Int64(random.next(below: UInt64(span)))
                    let length = Int64(1 + random.next(below: step % 4 == 0 ? 24 * 12 : 30))
                    let range = HourRange(Hour(index: lower), Hour(index: lower + length))
                    var rows: [Int64: [Int64: Int64]] = [:]
                    for _ in 0..<Int(10 + random.next(below: 200)) {
                        let hour = lower + Int64(random.next(below: UInt64(length)))
                        let track = Int64(1 + random.next(below: 30) * random.next(below: 3) / 2)
                        rows[hour, default: [:]][track, default: 0] += Int64(1 + random.next(below: 9))
                    }
                    try batch.replace(range: range, run: BatchRun(range: range, startedAt: 0, finishedAt: 0, eventsRead: 0, valid: 0,
                                                                  duplicates: 0, rejected: 0, rejectedByReason: [:], tracks: 0, rows: 0)) { writer in
                        for (hour, tracks) in rows { for (track, plays) in tracks {
                            try writer.write(trackID: track, hour: Hour(index: hour), plays: plays)
                        } }
                    }
                    for hour in range.lower.index..<range.upper.index { model.batch[hour] = rows[hour] }
                    model.coverage.insert(range)
                } else {
                    var rows: [CountRow] = []
                    for _ in 0..<Int(5 + random.next(below: 100)) {
                        let hour = Self.origin + Int64(random.next(below: UInt64(span + 48)))
                        let track = Int64(1 + random.next(below: 30))
                        let plays = Int64(1 + random.next(below: 5))
                        rows.append(CountRow(id: track, hour: Hour(index: hour), plays: plays))
                        model.realtime[hour, default: [:]][track, default: 0] += plays
                    }
                    _ = try realtime.apply(increments: rows, progress: [PartitionProgress(
                        topic: "plays", partition: 0, startOffset: nextOffset == 0 ? nil : nextOffset,
                        nextOffset: nextOffset + 1, highWatermark: nil)], flushedAt: 1)
                    nextOffset += 1
                }

                var ranges: [HourRange] = [.allTime]
                for _ in 0..<6 {
                    let lower = Self.origin - 30 + Int64(random.next(below: UInt64(span + 60)))
                    let upper = lower + Int64(random.next(below: UInt64(span)))
                    ranges.append(HourRange(Hour(index: lower), Hour(index: upper)))
                }
                for range in ranges {
                    let expectedTop = model.top(in: range, limit: 0)
                    for track in [1, 2, 5, 17, 31] as [Int64] {
                        #expect(try reader.plays(track: track, in: range).plays == model.total(track: track, in: range))
                    }
                    let limit = 1 + Int(random.next(below: 12))
                    let ranked = try reader.top(in: range, limit: limit)
                    let expected = expectedTop.map { TrackPlays(id: $0.key, batchPlays: $0.value, realtimePlays: 0) }
                        .sorted(by: TrackPlays.ranksAbove).prefix(limit)
                    #expect(ranked.map(\.id) == expected.map(\.id), "top \(limit) over \(range) after step \(step)")
                    #expect(ranked.map(\.plays) == expected.map(\.plays))
                    #expect(ranked.allSatisfy { $0.batchPlays + $0.realtimePlays == $0.plays })

                    guard range != .allTime else { continue }
                    let days = HourRange(range.lower.startOfDay, range.upper.advanced(by: 23).startOfDay)
                    let timeline = try reader.timeline(track: 1, in: days, step: .day)
                    #expect(timeline.map(\.count) == timeline.map { point in
                        model.total(track: 1, in: HourRange(point.start, point.start.advanced(by: 24)))
                    })
                }
            }
        }
    }

    @Test("a version-1 batch store is migrated: its hours keep their counts and gain day and month sums")
    func migratesVersionOne() throws {
        try withStoreLocation { location in
            try FileManager.default.createDirectory(atPath: location.directory, withIntermediateDirectories: true)
            let hoursOfTwoMonths = HourRange(Hour(index: Self.origin), Hour(index: Self.origin + 24 * 40))
            do {
                let database = try Database(path: location.batchPath)
                try database.write { db in
                    try db.execute(SQLiteSchema.batch.migrations[0])
                    try db.setUserVersion(1)
                    for offset in stride(from: Int64(0), to: 24 * 40, by: 7) {
                        try db.execute("INSERT INTO batch_counts (hour, track_id, plays, run_id) VALUES (\(Self.origin + offset), \(1 + offset % 3), \(offset % 11 + 1), 1)")
                    }
                    try db.execute("INSERT INTO coverage (lower, upper) VALUES (\(hoursOfTwoMonths.lower.index), \(hoursOfTwoMonths.upper.index))")
                }
            }
            _ = try SQLiteBatchStore(location: location)
            let reader = try StoreBackend.sqlite(location).openReader()
            var expected: [Int64: Int64] = [:]
            for offset in stride(from: Int64(0), to: 24 * 40, by: 7) { expected[1 + offset % 3, default: 0] += offset % 11 + 1 }
            for track in 1...3 as ClosedRange<Int64> {
                #expect(try reader.plays(track: track, in: .allTime).plays == expected[track])
            }
            #expect(try reader.top(in: .allTime, limit: 3).map(\.plays) == expected.values.sorted(by: >))
            let days = try reader.timeline(track: 1, in: hoursOfTwoMonths, step: .day)
            #expect(days.reduce(0) { $0 + $1.count } == expected[1])
        }
    }
}

extension SeededRandom {
    /// `next(below:)` for the unsigned bounds these tests compute.
    mutating func next(below bound: UInt64) -> UInt64 { UInt64(next(below: Int(bound))) }
}
