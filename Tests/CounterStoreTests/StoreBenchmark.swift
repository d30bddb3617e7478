import CounterStore
import CoreTestSupport
import CounterpointCore
import Foundation
import Generator
import Patience
import PostgresDB
import PostgresTestServer
import Testing

/// SQLite against PostgreSQL in the same run, through the seam; off unless asked for:
/// `COUNTERPOINT_BENCHMARKS=1 swift test -c release -Xswiftc -enable-testing --filter StoreBenchmark`.
/// PostgreSQL is the suite's local server (fsync on, defaults otherwise) on the same cores as
/// the benchmark, reached over loopback TCP; the figures depend on the machine and its load.
@Suite("Store benchmark: SQLite vs PostgreSQL", .onTestThreads, .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARKS"] != nil, "set COUNTERPOINT_BENCHMARKS=1 to run"))
struct StoreBenchmark {
    static let flushRows = 20_000
    static let flushes = 30
    static let batchRows = 1_000_000
    static let lookups = 20_000

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func report(_ line: String) {
        print("[store-benchmark] \(line)")
    }

    /// Dimension blobs as the aggregation makes them for a (track, hour) of `plays` plays
    /// (`blobs[plays][variant]`, 1…9 plays): positions over the 100 buckets (a third of them at
    /// 0, as drops are), 4 clients and 30 countries, each field missing for some plays.
    static let blobs: [[[UInt8]]] = {
        var random = SeededRandom(seed: 11)
        let clients = ["ios", "android", "web", "desktop"].compactMap(DimensionValue.init)
        let countries = (0..<30).compactMap { DimensionValue(String(UnicodeScalar(65 + $0 / 6)!) + String(UnicodeScalar(65 + $0 % 6)!)) }
        return (0...9).map { plays in
            (0..<64).map { _ in
                var counts = DimensionCounts()
                for _ in 0..<plays {
                    let position = random.next(below: 12)
                    counts.add(id: 1, hour: Hour(index: 0), PlayDimensions(
                        waveformBucket: position == 0 ? nil : position < 5 ? 0 : Int8(random.next(below: 100)),
                        client: position == 1 ? nil : clients[random.next(below: clients.count)],
                        country: position == 2 ? nil : countries[random.next(below: countries.count)]))
                }
                return counts.rows().first?.encoded ?? []
            }
        }
    }()

    static func label(_ backend: Backend, _ withDimensions: Bool) -> String {
        "\(backend) \(withDimensions ? "with dimension rows" : "plays only")"
    }

    @Test("realtime flushes of 20k (track, hour) rows", arguments: Backend.allCases, [false, true])
    func realtimeFlushes(_ backend: Backend, withDimensions: Bool) throws {
        try withStores(backend) { stores in
            let writer = try stores.realtime()
            var random = SeededRandom(seed: 7)
            var offset: Int64?
            var elapsed = Duration.zero
            for flushIndex in 0..<Self.flushes {
                // A flush as the consumer makes it: distinct (track, hour) among 200k tracks in
                // the two newest hours, half of them already present (increments add up).
                var rows: [Int64: CountRow] = [:]
                while rows.count < Self.flushRows {
                    let track = Int64(1 + random.next(below: 200_000))
                    let hourIndex = day.index + 48 + Int64(random.next(below: 2))
                    rows[track * 4 + hourIndex % 2] = CountRow(id: track, hour: Hour(index: hourIndex), plays: 1 + Int64(random.next(below: 3)))
                }
                // Each row's dimension counts, as many plays as it counts.
                let dimensions = withDimensions ? rows.values.map { row in
                    EncodedRow(id: row.id, hour: row.hour, encoded: Self.blobs[Int(row.plays)][random.next(below: 64)])
                } : []
                let next = Int64(flushIndex + 1) * 1_000
                let start = ContinuousClock.now
                let outcome = try writer.apply(increments: Array(rows.values), dimensions: dimensions, progress: [
                    PartitionProgress(topic: "plays", partition: 0, startOffset: offset, nextOffset: next, highWatermark: next),
                ], flushedAt: next)
                elapsed += ContinuousClock.now - start
                #expect(outcome == .committed)
                offset = next
            }
            let rows = Double(Self.flushes * Self.flushRows)
            Self.report("\(Self.label(backend, withDimensions)): realtime flush \(Self.flushes) × \(Self.flushRows) rows: "
                        + "\(Int(rows / Self.seconds(elapsed))) rows/s, \(Int(Self.seconds(elapsed) / Double(Self.flushes) * 1000)) ms a flush")
        }
    }

    @Test("batch write of 1 M (track, hour) rows, then point lookups through CounterReader", arguments: Backend.allCases, [false, true])
    func batchAndLookups(_ backend: Backend, withDimensions: Bool) throws {
        try withStores(backend) { stores in
            let batch = try stores.batch()
            // 30 days × 24 hours × ~1,389 tracks: a month rebuilt by one run.
            let range = HourRange(day, day.advanced(by: 24 * 30))
            let tracksPerHour = Self.batchRows / (24 * 30)
            let start = ContinuousClock.now
            try batch.replace(range: range, run: batchRun(range, rows: Self.batchRows)) { writer in
                for hourOffset in 0..<Int64(24 * 30) {
                    for track in 0..<Int64(tracksPerHour) {
                        let plays = 1 + (track + hourOffset) % 9
                        try writer.write(trackID: 1 + (track * 7 + hourOffset) % 20_000, hour: day.advanced(by: hourOffset), plays: plays,
                                         dimensions: withDimensions ? Self.blobs[Int(plays)][Int(track % 64)] : [])
                    }
                }
            }
            let written = tracksPerHour * 24 * 30
            let batchSeconds = Self.seconds(ContinuousClock.now - start)
            Self.report("\(Self.label(backend, withDimensions)): batch write \(written) rows: \(String(format: "%.2f", batchSeconds)) s, \(Int(Double(written) / batchSeconds)) rows/s")

            // Realtime rows after the batch's coverage, as a consumer would have left them.
            let writer = try stores.realtime()
            _ = try writer.apply(increments: (1...Int64(20_000)).map { CountRow(id: $0, hour: range.upper, plays: 1) },
                                 progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 1, highWatermark: 1)],
                                 flushedAt: 1)

            let reader = try stores.reader()
            var random = SeededRandom(seed: 3)
            var total: Int64 = 0
            let lookupStart = ContinuousClock.now
            for _ in 0..<Self.lookups {
                let lower = day.advanced(by: Int64(random.next(below: 24 * 20)))
                total &+= try reader.plays(track: Int64(1 + random.next(below: 20_000)),
                                           in: HourRange(lower, range.upper.advanced(by: 1))).plays
            }
            let lookupSeconds = Self.seconds(ContinuousClock.now - lookupStart)
            Self.report("\(Self.label(backend, withDimensions)): point lookups (one snapshot each, batch days+hours and realtime): "
                        + "\(Int(Double(Self.lookups) / lookupSeconds))/s on one thread, "
                        + "\(String(format: "%.0f", lookupSeconds / Double(Self.lookups) * 1e6)) µs each")
            #expect(total > 0)
        }
    }
}

/// The bulk path chosen for PostgreSQL against the usual alternative, on a bare table with the
/// realtime layer's keys: 20k-row upserts as three `unnest` arrays in one statement, or as
/// multi-row VALUES lists of 500 rows (1,500 parameters) each.
@Suite("PostgreSQL bulk upsert: unnest arrays vs VALUES lists", .onTestThreads, .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARKS"] != nil, "set COUNTERPOINT_BENCHMARKS=1 to run"))
struct BulkUpsertBenchmark {
    @Test("20k-row upserts, both ways")
    func compare() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        let connection = try PostgresConnection(url: url)
        try connection.execute("""
            CREATE TABLE counts (hour bigint NOT NULL, track_id bigint NOT NULL, plays bigint NOT NULL, PRIMARY KEY (hour, track_id));
            CREATE INDEX counts_by_track ON counts (track_id, hour, plays);
            """)
        let rows = 20_000
        let rounds = 20
        let valuesPerStatement = 500
        let valuesSQL = "INSERT INTO counts AS c (hour, track_id, plays) VALUES "
            + (0..<valuesPerStatement).map { "($\(3 * $0 + 1)::bigint, $\(3 * $0 + 2)::bigint, $\(3 * $0 + 3)::bigint)" }.joined(separator: ", ")
            + " ON CONFLICT (hour, track_id) DO UPDATE SET plays = c.plays + excluded.plays"
        var unnestTime = Duration.zero
        var valuesTime = Duration.zero
        for round in 0..<rounds {
            let tracks = (0..<Int64(rows)).map { ($0 * 7_919 + Int64(round) * 13) % 200_000 + 1 }.sorted()
            let hour = Int64(500_000 + round % 2)
            var start = ContinuousClock.now
            try connection.write { db in
                try db.query("""
                    INSERT INTO counts AS c (hour, track_id, plays)
                    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[])
                    ON CONFLICT (hour, track_id) DO UPDATE SET plays = c.plays + excluded.plays
                    """, [PostgresInt64Array(Array(repeating: hour, count: rows)), PostgresInt64Array(tracks),
                          PostgresInt64Array(Array(repeating: 1, count: rows))])
            }
            unnestTime += ContinuousClock.now - start
            start = ContinuousClock.now
            try connection.write { db in
                for chunk in stride(from: 0, to: rows, by: valuesPerStatement) {
                    var parameters: [any PostgresParameter] = []
                    parameters.reserveCapacity(3 * valuesPerStatement)
                    for track in tracks[chunk..<chunk + valuesPerStatement] { parameters += [hour + 2, track, Int64(1)] }
                    try db.query(valuesSQL, parameters)
                }
            }
            valuesTime += ContinuousClock.now - start
        }
        let total = Double(rows * rounds)
        StoreBenchmark.report("postgresql bulk upsert: unnest arrays \(Int(total / StoreBenchmark.seconds(unnestTime))) rows/s, "
                              + "VALUES lists of \(valuesPerStatement) \(Int(total / StoreBenchmark.seconds(valuesTime))) rows/s")
    }
}
