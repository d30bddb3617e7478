@testable import CounterStore
import CoreTestSupport
import CounterpointCore
import Foundation
import Patience
import PostgresDB
import PostgresTestServer
import Runtime
import SQLiteDB
import Testing

/// Dimension counts in both layers — replaced with the plays by batch runs, flushed with them,
/// compacted and rolled up — against a model of the plays (and comments, SPEC §11) kept by the
/// test, merged hour by hour.
@Suite("Dimension counts in both layers against a brute-force model", .onTestThreads)
struct DimensionStoreTests {
    struct Play: Hashable {
        var bucket: Int8?
        var client: String?
        var country: String?
        /// A comment's weight (1, or −1 for a deletion) instead of a play: `bucket` is where it sits.
        var comment: Int64? = nil
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

    /// A few comments and deletions, with a bucket or without.
    static func randomComments(_ random: inout some RandomNumberGenerator) -> [Play] {
        (0..<Int.random(in: 0...2, using: &random)).map { _ in
            Play(bucket: Int.random(in: 0..<4, using: &random) == 0 ? nil : Int8.random(in: 0...9, using: &random) * 11,
                 comment: Bool.random(using: &random) ? 1 : -1)
        }
    }

    /// Counts and dimension rows of `plays` as an aggregation would hand them to a store.
    static func rows(_ plays: [(track: Int64, hour: Int64, play: Play)]) -> ([CountRow], [EncodedRow]) {
        var counts = HourCounts()
        var dimensions = DimensionCounts()
        for (track, hourIndex, play) in plays {
            if let weight = play.comment {
                counts.add(id: track, hour: Hour(index: hourIndex), signal: .comments, weight: weight)
                if let bucket = play.bucket { dimensions.addComment(id: track, hour: Hour(index: hourIndex), waveformBucket: bucket, weight: weight) }
                continue
            }
            counts.add(id: track, hour: Hour(index: hourIndex))
            dimensions.add(id: track, hour: Hour(index: hourIndex),
                           PlayDimensions(waveformBucket: play.bucket, client: play.client.flatMap(DimensionValue.init),
                                          country: play.country.flatMap(DimensionValue.init)))
        }
        return (Array(counts.sortedElements()), dimensions.rows())
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

    /// What the comments' waveform must say about `comments`, worked out without the encoding.
    static func check(_ answer: TrackWaveform, comments: [Play], _ comment: Comment) {
        var waveform = [Int64](repeating: 0, count: 100)
        for event in comments { if let bucket = event.bucket { waveform[Int(bucket)] += event.comment! } }
        let total = comments.reduce(0) { $0 + $1.comment! }
        #expect(answer.buckets == waveform && answer.total == total, comment)
        #expect(answer.withoutPosition == comments.filter { $0.bucket == nil }.reduce(0) { $0 + $1.comment! }, comment)
    }

    /// (integer, integer, blob) rows of `sql`, read from the store's tables directly: the batch
    /// file or the realtime file on SQLite, the one database on PostgreSQL.
    static func tableRows(_ stores: TestStores, batch: Bool, _ sql: String) throws -> [(Int64, Int64, [UInt8])] {
        switch stores.backend {
        case let .sqlite(location):
            var rows: [(Int64, Int64, [UInt8])] = []
            let database = try Database(path: batch ? location.batchPath : location.realtimePath, mode: .readOnly)
            try database.makeStatement(sql).forEachRow { rows.append(($0.int64(at: 0), $0.int64(at: 1), $0.bytes(at: 2))) }
            return rows
        case let .postgres(url):
            let result = try PostgresConnection(url: url).query(sql)
            return (0..<result.rowCount).map {
                (result.int64(row: $0, column: 0), result.int64(row: $0, column: 1), result.bytes(row: $0, column: 2))
            }
        }
    }

    @Test("merged dimension counts equal the model over random ranges, through reruns, flushes and compaction",
          arguments: Backend.allCases)
    func randomHistory(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch(sortBufferRows: 50)
            let realtime = try stores.realtime()
            let reader = try stores.reader()
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
                    for play in Self.randomPlays(&random) + Self.randomComments(&random) {
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
                        for play in Self.randomPlays(&random) + Self.randomComments(&random) {
                            written.append((track, hourIndex, play))
                            model.batch[hourIndex, default: [:]][track, default: []].append(play)
                        }
                    }
                    // Written in two halves, so that rows for one (track, hour) arrive twice and merge.
                    let halves = [Array(written.prefix(written.count / 2)), Array(written.dropFirst(written.count / 2))]
                    try batch.replace(range: range, run: batchRun(range)) { writer in
                        for half in halves {
                            let (counts, dimensions) = Self.rows(half)
                            let byKey = Dictionary(uniqueKeysWithValues: dimensions.map { ("\($0.id)/\($0.hour.index)", $0.encoded) })
                            for row in counts {
                                try writer.write(trackID: row.id, hour: row.hour, counts: row.counts,
                                                 dimensions: byKey["\(row.id)/\(row.hour.index)"] ?? [])
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
                    let events = model.plays(track: track, in: range)
                    Self.check(try reader.dimensions(track: track, in: range), events.filter { $0.comment == nil },
                               "step \(step), track \(track), \(range)")
                    Self.check(try reader.waveform(track: track, in: range, signal: .comments),
                               comments: events.filter { $0.comment != nil }, "step \(step), track \(track), \(range)")
                }
            }
            // The rollups hold exactly the merged hours: recomputing them from the hour table agrees.
            let levels: [(table: String, key: String, bucket: (Hour) -> Int64)] = [
                ("batch_days", "day", { UTCCalendar.day(of: $0) }),
                ("batch_months", "month", { UTCCalendar.month(ofDay: UTCCalendar.day(of: $0)) }),
            ]
            for (table, key, bucket) in levels {
                var fromHours: [String: [UInt8]] = [:]
                for (track, hourIndex, blob) in try Self.tableRows(stores, batch: true, "SELECT track_id, hour, dimensions FROM batch_hours ORDER BY hour") {
                    let name = "\(track)/\(bucket(Hour(index: hourIndex)))"
                    fromHours[name] = DimensionEncoding.merged(fromHours[name] ?? [], blob)
                }
                var stored: [String: [UInt8]] = [:]
                for (track, bucket, blob) in try Self.tableRows(stores, batch: true, "SELECT track_id, \(key), dimensions FROM \(table)") {
                    stored["\(track)/\(bucket)"] = blob
                }
                #expect(stored.filter { !$0.value.isEmpty } == fromHours.filter { !$0.value.isEmpty }, "\(table)")
            }
        }
    }

    @Test("an hour, day or month whose comments net 0 keeps where they sit on the waveform, through a rerun of other hours",
          arguments: Backend.allCases)
    func commentsNettingZero(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch()
            let reader = try stores.reader()
            // Track 9 on the day: hour 3 a comment in bucket 10 and a deletion in 20 (0 comments);
            // hour 5 a comment in 30, hour 6 a deletion in 40 (so the day nets 0 too); nothing else.
            let events: [(hour: Int64, play: Play)] = [(3, Play(bucket: 10, comment: 1)), (3, Play(bucket: 20, comment: -1)),
                                                       (5, Play(bucket: 30, comment: 1)), (6, Play(bucket: 40, comment: -1))]
            let month = hours(-8 * 24, 22 * 24)  // September 2026
            try batch.replace(range: month, run: batchRun(month)) { writer in
                let (counts, dimensions) = Self.rows(events.map { (track: 9, hour: hour($0.hour).index, play: $0.play) })
                for (row, blob) in zip(counts, dimensions) {
                    #expect(row.counts.comments == 0 || row.hour == hour(5) || row.hour == hour(6))
                    try writer.write(trackID: row.id, hour: row.hour, counts: row.counts, dimensions: blob.encoded)
                }
            }
            // A rerun of another hour of the day and month, with a play of another track: their
            // rollups are rebuilt around track 9's rows.
            try batch.replace(range: hours(12, 13), run: batchRun(hours(12, 13))) {
                try $0.write(trackID: 1, hour: hour(12), plays: 1)
            }
            var buckets = [Int64](repeating: 0, count: 100)
            (buckets[10], buckets[20], buckets[30], buckets[40]) = (1, -1, 1, -1)
            for range in [month, hours(0, 24), hours(-24, 48)] {
                let answer = try reader.waveform(track: 9, in: range, signal: .comments)
                #expect(answer.buckets == buckets && answer.total == 0 && answer.withoutPosition == 0, "\(range)")
            }
            let hourThree = try reader.waveform(track: 9, in: hours(3, 4), signal: .comments).buckets
            #expect(hourThree[10] == 1 && hourThree[20] == -1 && hourThree[30] == 0)
        }
    }

    @Test("compaction deletes the dimension rows of covered hours with their counts", arguments: Backend.allCases)
    func compactionDeletesDimensions(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch()
            let realtime = try stores.realtime()
            let (counts, dimensions) = Self.rows((0..<10).map { (track: 1, hour: hour($0).index, play: Play(bucket: 3, client: "ios", country: "SE")) })
            _ = try realtime.apply(increments: counts, dimensions: dimensions,
                                   progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 1, highWatermark: nil)],
                                   flushedAt: 1)
            try replace(batch, hours(0, 4), [])
            #expect(try realtime.compactCoveredHours(maxRows: 100) == 4)
            // Both backends keep the realtime blobs in the counters' rows.
            let left = try Self.tableRows(stores, batch: false, "SELECT hour, track_id, dimensions FROM realtime_counts WHERE dimensions IS NOT NULL")
            #expect(left.map(\.0).min() == hour(4).index)
            #expect(left.count == 6)
            // A covered hour without batch rows counts zero, dimensions included.
            let reader = try stores.reader()
            let answer = try reader.dimensions(track: 1, in: hours(0, 6))
            #expect(answer.plays.plays == 2 && answer.waveform[3] == 2 && answer.playsWithoutPosition == 0)
        }
    }

    @Test("two PostgreSQL writers flushing dimension counts of the same (track, hour)s at once end with exactly the merged counts")
    func concurrentPostgresWriters() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        defer { try? PostgresTestServer.shared().dropDatabase(url: url) }
        let flushes = 60
        let written = Written()
        onThreads(2) { writer in
            do {
                // Each thread is a consumer of its own partition, on its own connection;
                // both add to the same few (track, hour)s, so most merges meet the other's rows.
                let store = try PostgresRealtimeStore(url: url)
                var random = SystemRandomNumberGenerator()
                for flush in 0..<flushes {
                    var plays: [(track: Int64, hour: Int64, play: Play)] = []
                    for _ in 0..<8 {
                        let track = Int64.random(in: 1...3, using: &random), hourIndex = hour(Int64.random(in: 0..<3, using: &random)).index
                        plays += Self.randomPlays(&random).map { (track, hourIndex, $0) }
                    }
                    let (counts, dimensions) = Self.rows(plays)
                    let outcome = try store.apply(increments: counts, dimensions: dimensions, progress: [
                        PartitionProgress(topic: "plays", partition: Int32(writer), startOffset: flush == 0 ? nil : Int64(flush),
                                          nextOffset: Int64(flush + 1), highWatermark: nil),
                    ], flushedAt: 1)
                    if outcome == .committed { written.add(plays) } else { written.fail("flush \(flush) of writer \(writer): \(outcome)") }
                }
            } catch {
                written.fail("writer \(writer): \(error)")
            }
        }
        #expect(written.failures.isEmpty, "\(written.failures)")
        let reader = try TestStores(backend: .postgres(url: url)).reader()
        let plays = written.plays
        #expect(plays.count > flushes)
        for track in Int64(1)...3 {
            for range in [hours(0, 3), hours(0, 1), hours(1, 2), hours(2, 3)] {
                let expected = plays.filter { $0.track == track && range.contains(Hour(index: $0.hour)) }.map(\.play)
                Self.check(try reader.dimensions(track: track, in: range), expected, "track \(track), \(range)")
            }
        }
    }

    @Test("the PostgreSQL bulk load alone, two threads merging blobs into the same (track, hour)s, keeps every blob exact")
    func concurrentMergesWithoutCounts() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        defer { try? PostgresTestServer.shared().dropDatabase(url: url) }
        _ = try PostgresRealtimeStore(url: url) // the schema
        let transactions = 80
        let written = Written()
        onThreads(2) { writer in
            do {
                let connection = try PostgresConnection(url: url)
                var random = SystemRandomNumberGenerator()
                for _ in 0..<transactions {
                    var plays: [(track: Int64, hour: Int64, play: Play)] = []
                    for _ in 0..<6 {
                        let track = Int64.random(in: 1...3, using: &random), hourIndex = hour(Int64.random(in: 0..<2, using: &random)).index
                        plays += Self.randomPlays(&random).map { (track, hourIndex, $0) }
                    }
                    let rows = try CounterRows.realtime([CountRow](), dimensions: Self.rows(plays).1)
                    try retryingConflicts { try connection.write { try PostgresDialect($0).add(rows) } }
                    written.add(plays)
                }
            } catch {
                written.fail("writer \(writer): \(error)")
            }
        }
        #expect(written.failures.isEmpty, "\(written.failures)")
        let (_, expected) = Self.rows(written.plays)
        let stored = try PostgresConnection(url: url).query("SELECT hour, track_id, dimensions FROM realtime_counts ORDER BY hour, track_id")
        let rows = (0..<stored.rowCount).map {
            EncodedRow(id: stored.int64(row: $0, column: 1), hour: Hour(index: stored.int64(row: $0, column: 0)),
                         encoded: stored.bytes(row: $0, column: 2))
        }
        #expect(Set(rows) == Set(expected))
        #expect(rows.count == 6)
    }
}

/// The plays the writer threads committed, and what went wrong.
private final class Written: Sendable {
    private let committed = Locked<[(track: Int64, hour: Int64, play: DimensionStoreTests.Play)]>([])
    private let problems = Locked<[String]>([])

    var plays: [(track: Int64, hour: Int64, play: DimensionStoreTests.Play)] { committed.withLock { $0 } }
    var failures: [String] { problems.value }
    func add(_ plays: [(track: Int64, hour: Int64, play: DimensionStoreTests.Play)]) { committed.withLock { $0 += plays } }
    func fail(_ problem: String) { problems.withLock { $0.append(problem) } }
}
