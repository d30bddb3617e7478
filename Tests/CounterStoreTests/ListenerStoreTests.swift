@testable import CounterStore
import CoreTestSupport
import CounterpointCore
import Foundation
import Generator
import Patience
import PostgresTestServer
import SQLiteDB
import Testing

/// Listener sketches in both layers — replaced with the plays by batch runs, flushed with them,
/// compacted and rolled up — against the exact distinct listeners of the plays the test wrote,
/// kept in sets, merged hour by hour by the merge rule.
@Suite("Listener sketches in both layers against exact distinct counts", .onTestThreads)
struct ListenerStoreTests {
    /// One play: its track, hour index and listener (nil: a play without one).
    typealias Play = (track: Int64, hour: Int64, listener: Int64?)

    /// Plays per layer and hour, as the test wrote them.
    struct Model {
        var batch: [Int64: [Play]] = [:]
        var realtime: [Int64: [Play]] = [:]
        var coverage = Coverage()

        func plays(track: Int64, in range: HourRange) -> [Play] {
            var plays: [Play] = []
            for hour in range.lower.index..<max(range.lower.index, range.upper.index) {
                let layer = coverage.contains(Hour(index: hour)) ? batch : realtime
                plays += (layer[hour] ?? []).filter { $0.track == track }
            }
            return plays
        }
    }

    /// Counts and sketch rows of `plays` as an aggregation hands them to a store.
    static func rows(_ plays: [Play]) -> ([CountRow], [EncodedRow]) {
        var counts = HourCounts()
        var listeners = ListenerCounts()
        for play in plays {
            counts.add(id: play.track, hour: Hour(index: play.hour))
            listeners.add(id: play.track, hour: Hour(index: play.hour), listenerID: play.listener)
        }
        return (Array(counts.sortedElements()), listeners.rows())
    }

    /// Writes `plays` through a batch writer, in two halves so that rows of one (track, hour)
    /// arrive twice and unite.
    static func write(_ plays: [Play], to writer: BatchRowWriter) throws {
        for half in [Array(plays.prefix(plays.count / 2)), Array(plays.dropFirst(plays.count / 2))] {
            let (counts, sketches) = rows(half)
            let byKey = Dictionary(uniqueKeysWithValues: sketches.map { ("\($0.id)/\($0.hour.index)", $0) })
            for row in counts {
                let sketch = byKey["\(row.id)/\(row.hour.index)"]
                try writer.write(trackID: row.id, hour: row.hour, plays: row.plays, listenerPlays: sketch?.value ?? 0,
                                 listeners: sketch?.encoded ?? [])
            }
        }
    }

    /// What an answer must say about `plays`: exact answers equal the distinct count (and up to
    /// 100 listeners every answer is exact); estimates are within four standard errors.
    static func check(_ answer: TrackListeners, _ plays: [Play], _ comment: Comment) {
        let truth = Int64(Set(plays.compactMap(\.listener)).count)
        #expect(answer.plays.plays == Int64(plays.count), comment)
        #expect(answer.playsWithoutListener == Int64(plays.filter { $0.listener == nil }.count), comment)
        if truth <= 100 { #expect(answer.exact, comment) }
        if answer.exact {
            #expect(answer.listeners == truth, comment)
        } else {
            #expect(abs(Double(answer.listeners - truth)) <= 4 * 0.0163 * Double(truth), comment)
        }
    }

    @Test("merged listener counts equal the exact distinct count over random ranges, through reruns, flushes and compaction",
          arguments: Backend.allCases)
    func randomHistory(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch(sortBufferRows: 40)
            let realtime = try stores.realtime()
            let reader = try stores.reader()
            var model = Model()
            var random = SystemRandomNumberGenerator()
            // 2026-10-28 … 2026-11-06: crosses a month boundary, so month rollups are used.
            let origin = UTCTime.daysFromCivil(year: 2026, month: 10, day: 28) * 24
            let span: Int64 = 24 * 9
            // Tracks 1–5 draw from small pools of listeners (exact answers); track 6 from a large
            // one, so that its unions turn into estimates.
            func randomPlays(_ count: Int, in hours: Range<Int64>) -> [Play] {
                (0..<count).map { _ in
                    let track = Int64.random(in: 1...6, using: &random)
                    let pool: Int64 = track == 6 ? 5_000 : 12 * track
                    let listener = Int.random(in: 0..<8, using: &random) == 0 ? nil : Int64.random(in: 0..<pool, using: &random)
                    return (track, Int64.random(in: hours, using: &random), listener)
                }
            }
            var offset: Int64 = 0
            for step in 0..<18 {
                let flushed = randomPlays(400, in: origin..<origin + span)
                for play in flushed { model.realtime[play.hour, default: []].append(play) }
                let (counts, sketches) = Self.rows(flushed)
                let progress = [PartitionProgress(topic: "plays", partition: 0, startOffset: step == 0 ? nil : offset,
                                                  nextOffset: offset + 1, highWatermark: nil)]
                #expect(try realtime.apply(increments: counts, listeners: sketches, progress: progress, flushedAt: 1) == .committed)
                offset += 1

                // Every third step a batch run (re)writes a random range; some hours of it get no rows.
                if step % 3 == 2 {
                    let lower = origin + Int64.random(in: 0..<span - 1, using: &random)
                    let range = HourRange(Hour(index: lower), Hour(index: min(origin + span, lower + Int64.random(in: 1...60, using: &random))))
                    for hourIndex in range.lower.index..<range.upper.index { model.batch[hourIndex] = nil }
                    let written = randomPlays(600, in: range.lower.index..<range.upper.index)
                    for play in written { model.batch[play.hour, default: []].append(play) }
                    try batch.replace(range: range, run: batchRun(range)) { try Self.write(written, to: $0) }
                    model.coverage.insert(range)
                }
                if step % 4 == 3 { _ = try realtime.compactCoveredHours(maxRows: 50) }

                for _ in 0..<10 {
                    let track = Int64.random(in: 1...6, using: &random)
                    let lower = origin + Int64.random(in: -5..<span, using: &random)
                    let range = HourRange(Hour(index: lower), Hour(index: lower + Int64.random(in: 0...span, using: &random)))
                    Self.check(try reader.listeners(track: track, in: range), model.plays(track: track, in: range),
                               "step \(step), track \(track), \(range)")
                }
            }
            // Per-day timelines: each bucket is the distinct listeners of its day.
            let whole = HourRange(Hour(index: origin), Hour(index: origin + span))
            for track: Int64 in [1, 5, 6] {
                let points = try reader.listenerTimeline(track: track, in: whole, step: .day)
                #expect(points.count == 9)
                for point in points {
                    let dayPlays = model.plays(track: track, in: HourRange(point.start, point.start.advanced(by: 24)))
                    let truth = Int64(Set(dayPlays.compactMap(\.listener)).count)
                    if point.exact { #expect(point.listeners == truth, "track \(track), \(point.start)") }
                    else { #expect(abs(Double(point.listeners - truth)) <= 4 * 0.0163 * Double(truth), "track \(track), \(point.start)") }
                }
            }
            // The rollups hold exactly the union of their hours, also after reruns replaced some.
            try Self.checkRollups(stores)
        }
    }

    /// Every day and month sketch equals the union of the hour sketches under it, byte for byte.
    static func checkRollups(_ stores: TestStores) throws {
        var days: [String: HyperLogLog] = [:]
        var months: [String: HyperLogLog] = [:]
        for (track, hourIndex, bytes) in try DimensionStoreTests.tableRows(stores, batch: true,
                                                                           "SELECT track_id, hour, listeners FROM batch_hours WHERE listeners IS NOT NULL") {
            let sketch = try HyperLogLog(decoding: bytes)
            let day = UTCCalendar.day(of: Hour(index: hourIndex))
            try days["\(track)/\(day)", default: HyperLogLog()].formUnion(sketch)
            try months["\(track)/\(UTCCalendar.month(ofDay: day))", default: HyperLogLog()].formUnion(sketch)
        }
        for (table, key, expected) in [("batch_days", "day", days), ("batch_months", "month", months)] {
            var stored: [String: [UInt8]] = [:]
            for (track, bucket, bytes) in try DimensionStoreTests.tableRows(stores, batch: true,
                                                                            "SELECT track_id, \(key), listeners FROM \(table) WHERE listeners IS NOT NULL") {
                stored["\(track)/\(bucket)"] = bytes
            }
            #expect(stored == expected.mapValues(\.encoded), "\(table)")
        }
    }

    @Test("a rollup unites each bucket's hour sketches, in every representation, into the bytes of their union; a sketch that does not decode fails it, naming the track or creator")
    func rollupUnitesBuckets() throws {
        // Three tracks over two days of one month, hours without a sketch among them: track 1's
        // buckets stay explicit, track 2's explicit hours unite past the 320-hash limit into
        // sparse days and a full month, track 3's are full; listeners overlap across hours.
        var random = SeededRandom(seed: 18)
        var hours = CounterRows(Catalogue.batch(.hour))
        var days: [String: HyperLogLog] = [:]
        var months: [String: HyperLogLog] = [:]
        for track: Int64 in 1...3 {
            for offset in stride(from: Int64(0), to: 48, by: Int(1 + track)) {
                let hourIndex = hour(offset).index
                let sizes = [[0, 1, 5, 20, 40], [0, 100, 200], [0, 900, 3_000]][Int(track) - 1]
                let size = sizes[random.next(below: sizes.count)]
                let pool = track == 1 ? 300 : 1_000_000
                let ids = (0..<size).map { _ in Int64(random.next(below: pool)) }
                let sketch = HyperLogLog(listenerIDs: ids)
                try sketch.encoded.withUnsafeBytes {
                    try hours.append(track, hourIndex, plays: Int64(size + 1), dimensions: CounterRows.noBlob, listenerPlays: Int64(size),
                                     listeners: size == 0 ? CounterRows.noBlob : $0)
                }
                guard size > 0 else { continue }
                try days["\(track)/\(RollupLevel.day.key(of: Hour(index: hourIndex)))", default: HyperLogLog()].formUnion(sketch)
                try months["\(track)/\(RollupLevel.month.key(of: Hour(index: hourIndex)))", default: HyperLogLog()].formUnion(sketch)
            }
        }
        var representations: Set<HyperLogLog.Representation> = []
        for (level, expected) in [(RollupLevel.day, days), (.month, months)] {
            let rolled = try hours.rolledUp(to: level)
            var stored: [String: [UInt8]] = [:]
            rolled.listeners.withBlobs { sketch in
                for row in rolled.indices where !rolled.listeners.isEmpty(row) {
                    stored["\(rolled.firstKeys[row])/\(rolled.secondKeys[row])"] = Array(sketch(row))
                }
            }
            #expect(stored == expected.mapValues(\.encoded), "\(level)")
            representations.formUnion(expected.values.map(\.representation))
        }
        #expect(representations == [.explicit, .sparse, .full])

        // Subject 9's day holds a good sketch and, an hour later, bytes that do not decode: the
        // error names the subject, a track or a creator.
        for kind in SubjectKind.allCases {
            var damaged = CounterRows(Catalogue.batch(.hour, kind))
            try HyperLogLog(listenerIDs: [1, 2]).encoded.withUnsafeBytes {
                try damaged.append(9, hour(0).index, plays: 2, dimensions: CounterRows.noBlob, listenerPlays: 2, listeners: $0)
            }
            try [UInt8]([0x1F, 0x8C, 0x7F, 1]).withUnsafeBytes {
                try damaged.append(9, hour(1).index, plays: 1, dimensions: CounterRows.noBlob, listenerPlays: 1, listeners: $0)
            }
            #expect(throws: CounterStoreError.malformedListeners(Subject(kind, 9))) { try damaged.rolledUp(to: .day) }
            #expect("\(CounterStoreError.malformedListeners(Subject(kind, 9)))" == "a stored listener sketch of \(kind) 9 is malformed")
        }
    }

    @Test("a rerun that removes listeners rebuilds the day and month sketches from the hours left", arguments: Backend.allCases)
    func rerunRebuildsRollups(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch()
            let reader = try stores.reader()
            let first: [Play] = (0..<50).map { (1, hour(Int64($0 % 10)).index, Int64($0)) }
            try batch.replace(range: hours(0, 24), run: batchRun(hours(0, 24))) { try Self.write(first, to: $0) }
            #expect(try reader.listeners(track: 1, in: hours(0, 24)).listeners == 50)
            // Hours 0–4 again, now with listeners 1000… only: listeners 0–4, 10–14, … are gone.
            let second: [Play] = (0..<5).map { (1, hour(Int64($0)).index, Int64(1_000 + $0)) }
            try batch.replace(range: hours(0, 5), run: batchRun(hours(0, 5))) { try Self.write(second, to: $0) }
            let kept = first.filter { $0.hour >= hour(5).index } + second
            let answer = try reader.listeners(track: 1, in: hours(0, 24))
            #expect(answer.listeners == Int64(Set(kept.compactMap(\.listener)).count) && answer.exact)
            #expect(answer.plays.plays == Int64(kept.count))
            // A whole-month range reads the month row: it was rebuilt too.
            let month = RollupLevel.month.key(of: hour(0))
            let monthRange = HourRange(RollupLevel.month.firstHour(ofKey: month), RollupLevel.month.firstHour(ofKey: month + 1))
            #expect(try reader.listeners(track: 1, in: monthRange).listeners == 30)
            try Self.checkRollups(stores)
        }
    }

    @Test("a rerun of an hour that only gained listeners leaves every day and month sketch the union of its hours, as one that lost some does",
          arguments: Backend.allCases)
    func rerunThatGainsListeners(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch()
            let reader = try stores.reader()
            // Tracks 1–3 over two days, their sketches explicit (track 1), sparse (2) and full (3).
            var random = SeededRandom(seed: 41)
            let sizes: [Int64: Int] = [1: 3, 2: 30, 3: 400]
            var first: [Play] = []
            for track: Int64 in 1...3 {
                for offset in 0..<Int64(48) {
                    first += (0..<sizes[track]!).map { _ -> Play in (track, hour(offset).index, Int64(random.next(below: 1_000_000))) }
                }
            }
            try batch.replace(range: hours(0, 48), run: batchRun(hours(0, 48))) { try Self.write(first, to: $0) }
            // Hour 13 again, as a late file adds to it: tracks 1 and 2 keep every listener and
            // gain new ones; track 3 gains some and loses one.
            var again = first.filter { $0.hour == hour(13).index }
            let lost = again.last { $0.track == 3 }?.listener
            again.removeAll { $0.track == 3 && $0.listener == lost }
            for track: Int64 in 1...3 {
                again += (0..<sizes[track]!).map { index -> Play in (track, hour(13).index, Int64(2_000_000 + index)) }
            }
            try batch.replace(range: hours(13, 14), run: batchRun(hours(13, 14))) { try Self.write(again, to: $0) }
            let kept = first.filter { $0.hour != hour(13).index } + again
            try Self.checkRollups(stores)
            for track: Int64 in 1...3 {
                Self.check(try reader.listeners(track: track, in: hours(0, 48)), kept.filter { $0.track == track }, "track \(track)")
            }
        }
    }

    @Test("a flush read twice changes plays but never the listener count", arguments: Backend.allCases)
    func duplicatesNeverRaiseListeners(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let realtime = try stores.realtime()
            let reader = try stores.reader()
            let plays: [Play] = (0..<40).map { (7, hour(Int64($0 % 3)).index, Int64($0 % 25)) } + [(7, hour(0).index, nil)]
            let (counts, sketches) = Self.rows(plays)
            for offset in Int64(0)..<2 {
                let progress = [PartitionProgress(topic: "plays", partition: 0, startOffset: offset == 0 ? nil : offset,
                                                  nextOffset: offset + 1, highWatermark: nil)]
                #expect(try realtime.apply(increments: counts, listeners: sketches, progress: progress, flushedAt: 1) == .committed)
            }
            let answer = try reader.listeners(track: 7, in: hours(0, 3))
            #expect(answer.listeners == 25 && answer.exact)
            #expect(answer.plays.plays == 82 && answer.playsWithoutListener == 2)
        }
    }

    @Test("compaction deletes the realtime sketches of covered hours with their counts", arguments: Backend.allCases)
    func compactionDeletesSketches(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch()
            let realtime = try stores.realtime()
            let (counts, sketches) = Self.rows((0..<10).map { (1, hour(Int64($0)).index, Int64($0)) })
            _ = try realtime.apply(increments: counts, listeners: sketches,
                                   progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 1, highWatermark: nil)],
                                   flushedAt: 1)
            try replace(batch, hours(0, 4), [])
            #expect(try realtime.compactCoveredHours(maxRows: 100) == 4)
            // Both backends keep the realtime sketches in the counters' rows.
            let left = try DimensionStoreTests.tableRows(stores, batch: false,
                                                         "SELECT hour, track_id, listeners FROM realtime_counts WHERE listeners IS NOT NULL")
            #expect(left.map(\.0).sorted() == (4..<10).map { hour($0).index })
            // A covered hour without batch rows counts no listener.
            let answer = try stores.reader().listeners(track: 1, in: hours(0, 10))
            #expect(answer.listeners == 6 && answer.exact && answer.playsWithoutListener == 0)
        }
    }

    @Test("a stored sketch that does not decode fails that answer with a clear error; other answers go on", arguments: Backend.allCases)
    func damagedSketch(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch()
            try batch.replace(range: hours(0, 2), run: batchRun(hours(0, 2))) { writer in
                try writer.write(trackID: 1, hour: hour(0), plays: 3, listenerPlays: 3, listeners: [0x1F, 0x8C, 0x7F, 1])
                try writer.write(trackID: 2, hour: hour(0), plays: 1, listenerPlays: 1,
                                 listeners: HyperLogLog(listenerIDs: [5]).encoded)
            }
            let reader = try stores.reader()
            #expect(throws: CounterStoreError.malformedListeners(.track(1))) { try reader.listeners(track: 1, in: hours(0, 2)) }
            #expect(throws: CounterStoreError.malformedListeners(.track(1))) {
                try reader.listenerTimeline(track: 1, in: hours(0, 2), step: .hour)
            }
            #expect(try reader.plays(track: 1, in: hours(0, 2)).plays == 3)
            #expect(try reader.listeners(track: 2, in: hours(0, 2)).listeners == 1)
        }
    }

    @Test("SQLite stores of the schema before listeners are migrated: their plays count as plays without a listener, and new flushes and runs add sketches")
    func migratesStoresWithoutListeners() throws {
        try withStoreLocation { location in
            try FileManager.default.createDirectory(atPath: location.directory, withIntermediateDirectories: true)
            // Both files as the version before listeners left them, with counts in them.
            for (path, schema, version, rows) in [
                (location.realtimePath, SQLiteSchema.realtime, 3, "INSERT INTO realtime_counts (hour, track_id, plays) VALUES (\(hour(30).index), 1, 5)"),
                (location.batchPath, SQLiteSchema.batch, 4, """
                    INSERT INTO batch_hours (track_id, hour, plays) VALUES (1, \(hour(3).index), 7);
                    INSERT INTO batch_days (track_id, day, plays) VALUES (1, \(UTCCalendar.day(of: hour(3))), 7);
                    INSERT INTO batch_months (track_id, month, plays) VALUES (1, \(RollupLevel.month.key(of: hour(3))), 7);
                    INSERT INTO coverage (lower, upper) VALUES (\(hour(0).index), \(hour(24).index));
                    """),
            ] {
                let database = try Database(path: path)
                try database.write { db in
                    for migration in schema.migrations.prefix(version) { try db.execute(migration) }
                    try db.setUserVersion(version)
                    try db.execute(rows)
                }
            }
            let realtime = try SQLiteRealtimeStore(location: location)
            let batch = try SQLiteBatchStore(location: location)
            let reader = try StoreBackend.sqlite(location).openReader()
            let before = try reader.listeners(track: 1, in: .allTime)
            #expect(before.listeners == 0 && before.exact && before.plays.plays == 12 && before.playsWithoutListener == 12)

            let (counts, sketches) = Self.rows([(1, hour(30).index, 100), (1, hour(31).index, 101)])
            #expect(try realtime.apply(increments: counts, listeners: sketches, progress: [
                PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 1, highWatermark: nil),
            ], flushedAt: 1) == .committed)
            try batch.replace(range: hours(0, 24), run: batchRun(hours(0, 24))) {
                try Self.write([(1, hour(3).index, 100), (1, hour(4).index, 102), (1, hour(5).index, nil)], to: $0)
            }
            let after = try reader.listeners(track: 1, in: .allTime)
            #expect(after.listeners == 3 && after.exact)
            #expect(after.plays.plays == 3 + 7 && after.playsWithoutListener == 1 + 5)
        }
    }
}

