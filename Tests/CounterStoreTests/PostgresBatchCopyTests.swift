@testable import CounterStore
import CoreTestSupport
import CounterpointCore
import Foundation
import Generator
import Patience
import PostgresDB
import PostgresTestServer
import Runtime
import SQLiteDB
import Testing

/// The PostgreSQL batch writer's bulk path (`PostgresCounterWrite`: rows copied straight into
/// buckets that hold none yet, merged under locks otherwise), against the plays the test wrote
/// and against the SQLite store given the same rows, row for row and byte for byte.
@Suite("PostgreSQL batch writes by COPY", .onTestThreads)
struct PostgresBatchCopyTests {
    /// One stored row of a batch table. A blob that is absent reads as nil, whether stored as
    /// NULL or empty (both mean none; SQLite keeps some as empty blobs).
    struct StoredRow: Hashable, CustomStringConvertible {
        var track: Int64
        var bucket: Int64
        var plays: Int64
        var dimensions: [UInt8]?
        var listenerPlays: Int64
        var listeners: [UInt8]?

        init(_ track: Int64, _ bucket: Int64, plays: Int64, dimensions: [UInt8], listenerPlays: Int64, listeners: [UInt8]) {
            (self.track, self.bucket, self.plays, self.listenerPlays) = (track, bucket, plays, listenerPlays)
            self.dimensions = dimensions.isEmpty ? nil : dimensions
            self.listeners = listeners.isEmpty ? nil : listeners
        }

        var description: String {
            "(\(track), \(bucket)): \(plays) plays \(dimensions ?? []), \(listenerPlays) with listeners \(listeners ?? [])"
        }
    }

    static func columns(_ table: CounterTable) -> String {
        "SELECT track_id, \(table.keys.second), plays, dimensions, listener_plays, listeners FROM \(table.name) ORDER BY 1, 2"
    }

    static func sqliteRows(_ location: StoreLocation, _ table: CounterTable) throws -> [StoredRow] {
        var rows: [StoredRow] = []
        try Database(path: location.batchPath, mode: .readOnly).makeStatement(columns(table)).forEachRow { row in
            rows.append(StoredRow(row.int64(at: 0), row.int64(at: 1), plays: row.int64(at: 2), dimensions: row.bytes(at: 3),
                                  listenerPlays: row.int64(at: 4), listeners: row.bytes(at: 5)))
        }
        return rows
    }

    static func postgresRows(_ url: String, _ table: CounterTable) throws -> [StoredRow] {
        let result = try PostgresConnection(url: url).query(columns(table))
        return (0..<result.rowCount).map { row in
            StoredRow(result.int64(row: row, column: 0), result.int64(row: row, column: 1), plays: result.int64(row: row, column: 2),
                      dimensions: result.bytes(row: row, column: 3), listenerPlays: result.int64(row: row, column: 4),
                      listeners: result.bytes(row: row, column: 5))
        }
    }

    struct Key: Hashable {
        var track: Int64
        var bucket: Int64
    }

    /// One play as the test writes it: its track and hour offset, a waveform bucket (nil: no
    /// dimension counts written for its row) and a listener.
    typealias Play = (track: Int64, hour: Int64, bucket: Int8?, listener: Int64?)

    static func randomPlays(_ count: Int, hours: Range<Int64>, _ random: inout some RandomNumberGenerator) -> [Play] {
        (0..<count).map { _ in
            (Int64.random(in: 1...40, using: &random), Int64.random(in: hours, using: &random),
             Int.random(in: 0..<3, using: &random) == 0 ? nil : Int8.random(in: 0...99, using: &random),
             Int.random(in: 0..<3, using: &random) == 0 ? nil : Int64.random(in: 1...500, using: &random))
        }
    }

    /// Writes `plays` in three groups, each aggregated per (track, hour) as a batch worker
    /// would: a key recurs across groups (and so across the store's small sort buffers). A row
    /// whose plays carried no bucket has no dimension blob (NULL), one without listeners no sketch.
    static func write(_ plays: [Play], to writer: BatchRowWriter) throws {
        let groups = 3
        for group in 0..<groups {
            var counts = HourCounts()
            var dimensions = DimensionCounts()
            var listeners = ListenerCounts()
            for play in plays.indices.filter({ $0 % groups == group }).map({ plays[$0] }) {
                let hour = day.advanced(by: play.hour)
                counts.add(id: play.track, hour: hour)
                if let bucket = play.bucket {
                    dimensions.add(id: play.track, hour: hour, PlayDimensions(waveformBucket: bucket, client: nil, country: nil))
                }
                listeners.add(id: play.track, hour: hour, listenerID: play.listener)
            }
            let blobs = Dictionary(uniqueKeysWithValues: dimensions.rows().map { (Key(track: $0.id, bucket: $0.hour.index), $0.encoded) })
            let sketches = Dictionary(uniqueKeysWithValues: listeners.rows().map { (Key(track: $0.id, bucket: $0.hour.index), $0) })
            for row in counts.sortedElements() {
                let key = Key(track: row.id, bucket: row.hour.index)
                try writer.write(trackID: row.id, hour: row.hour, plays: row.plays, dimensions: blobs[key] ?? [],
                                 listenerPlays: sketches[key]?.value ?? 0, listeners: sketches[key]?.encoded ?? [])
            }
        }
    }

    /// Plays per (track, bucket) of each batch table, counted from the plays themselves.
    static func expectedPlays(_ plays: [Play]) -> [[Key: Int64]] {
        Catalogue.batchTables.map { table in
            var sums: [Key: Int64] = [:]
            for play in plays {
                sums[Key(track: play.track, bucket: table.level!.key(of: day.advanced(by: play.hour))), default: 0] += 1
            }
            return sums
        }
    }

    @Test("rows with and without blobs, keys split across sort buffers, and a rerun over some of the hours store the plays written and the SQLite store's rows byte for byte")
    func sameAsSQLite() throws {
        var random = SeededRandom(seed: 17)
        // Three days across a month's end, so hours, days and months all have several buckets.
        let runs: [(range: Range<Int64>, plays: [Play])] = [
            (0..<72, Self.randomPlays(3_000, hours: 0..<72, &random)),
            (24..<48, Self.randomPlays(1_000, hours: 24..<48, &random)),
        ]
        try withStoreLocation { location in
            let server = try PostgresTestServer.shared()
            let url = try server.makeDatabase()
            defer { server.dropDatabase(url: url) }
            var configuration = SQLiteBatchStore.Configuration()
            configuration.sortBufferRows = 97
            var postgresConfiguration = PostgresBatchStore.Configuration()
            postgresConfiguration.sortBufferRows = 97
            let stores: [any BatchWriter] = [try SQLiteBatchStore(location: location, configuration: configuration),
                                              try PostgresBatchStore(url: url, configuration: postgresConfiguration)]
            var current: [Int64: [Play]] = [:]
            for (index, run) in runs.enumerated() {
                for store in stores {
                    try store.replace(range: HourRange(day.advanced(by: run.range.lowerBound), day.advanced(by: run.range.upperBound)),
                                      run: batchRun(hours(run.range.lowerBound, run.range.upperBound))) { try Self.write(run.plays, to: $0) }
                }
                for hour in run.range { current[hour] = run.plays.filter { $0.hour == hour } }
                let expected = Self.expectedPlays(current.values.flatMap { $0 })
                for (level, table) in Catalogue.batchTables.enumerated() {
                    let postgres = try Self.postgresRows(url, table)
                    let sqlite = try Self.sqliteRows(location, table)
                    #expect(postgres == sqlite, "run \(index + 1), \(table.name): first difference \(Self.firstDifference(postgres, sqlite))")
                    let stored = Dictionary(uniqueKeysWithValues: postgres.map { (Key(track: $0.track, bucket: $0.bucket), $0.plays) })
                    #expect(stored == expected[level], "run \(index + 1), \(table.name)")
                    #expect(postgres.contains { $0.dimensions != nil } && postgres.contains { $0.listeners != nil })
                }
                // PostgreSQL keeps a missing blob as NULL.
                let nulls = try PostgresConnection(url: url).query("""
                    SELECT count(*) FILTER (WHERE dimensions IS NULL), count(*) FILTER (WHERE listeners IS NULL) FROM batch_hours
                    """)
                #expect(nulls.int64(row: 0, column: 0) > 0 && nulls.int64(row: 0, column: 1) > 0)
            }
        }
    }

    static func firstDifference(_ a: [StoredRow], _ b: [StoredRow]) -> String {
        guard let index = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset else {
            return "row counts \(a.count) and \(b.count)"
        }
        return "\(a[index]) against \(b[index])"
    }

    @Test("a row another writer commits meanwhile under the key being copied fails the run with a constraint error, and the run leaves nothing behind")
    func conflictingWriterRollsBack() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        let store = try PostgresBatchStore(url: url)
        // A writer that ignores the batch writer lock holds an uncommitted row of (1, hour 5):
        // the run sees no row in its hours and copies, and its copy waits on that key.
        let intruder = try PostgresConnection(url: url)
        try intruder.execute("BEGIN")
        try intruder.query("INSERT INTO batch_hours (track_id, hour, plays) VALUES ($1, $2, $3)", [Int64(1), hour(5).index, Int64(9)])
        let failure = Locked<(any Error)?>(nil)
        let run = BlockingThread(name: "test-batch") {
            do {
                _ = try replace(PostgresBatchStore(url: url), hours(0, 24), [(1, 4, 2), (1, 5, 3), (2, 5, 1)])
            } catch {
                failure.withLock { $0 = error }
            }
        }
        let admin = try PostgresConnection(url: url)
        let deadline = ContinuousClock.now + .seconds(60)
        func copyWaits() throws -> Bool {
            try admin.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'COPY batch_hours%'")
                .singleInt64 == 1
        }
        while try !copyWaits(), ContinuousClock.now < deadline { BlockingThread.sleep(for: .milliseconds(20)) }
        #expect(try copyWaits())
        try intruder.execute("COMMIT")
        run.join()

        let error = try #require(failure.withLock { $0 } as? PostgresError)
        #expect(error.kind == .constraint)
        #expect(error.operation.hasPrefix("COPY batch_hours"))
        #expect(!error.description.contains("\n"))
        let stored = try admin.query("SELECT track_id, hour, plays FROM batch_hours")
        #expect(stored.rowCount == 1 && stored.int64(row: 0, column: 2) == 9)
        #expect(try admin.query("SELECT count(*) FROM batch_runs").singleInt64 == 0)
        #expect(try admin.query("SELECT count(*) FROM batch_days").singleInt64 == 0)
        #expect(try store.coverage().ranges.isEmpty)
    }
}
