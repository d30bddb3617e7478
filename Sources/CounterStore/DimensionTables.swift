import CounterpointCore
import SQLiteDB

/// The dimension counts of both SQLite layers (SPEC §3: "each layer also keeps, per (track,
/// hour), the waveform histogram and the breakdowns"): one `DimensionEncoding` blob per
/// (track, hour) beside each counts row, in the same transactions as the counts.
///
/// Hour tables are keyed (hour, track_id), so that a batch run's deletes and rollups and the
/// realtime compaction read contiguous rows, and indexed (track_id, hour) for the reader's
/// per-track lookups. Day and month rollups are keyed (track_id, bucket); they need no ranked
/// index, since nothing ranks by dimension.
enum DimensionTables {
    /// The SQL function that merges two blobs (`DimensionEncoding.merge`), registered on every
    /// writer connection for the upserts.
    static let mergeFunction = "counterpoint_merge_dimensions"

    static let realtimeMigration = """
        CREATE TABLE realtime_dimensions (
            hour INTEGER NOT NULL,
            track_id INTEGER NOT NULL,
            dimensions BLOB NOT NULL,
            PRIMARY KEY (hour, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX realtime_dimensions_by_track ON realtime_dimensions (track_id, hour);
        """

    static let batchMigration = """
        CREATE TABLE batch_dimension_hours (
            hour INTEGER NOT NULL,
            track_id INTEGER NOT NULL,
            dimensions BLOB NOT NULL,
            PRIMARY KEY (hour, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX batch_dimension_hours_by_track ON batch_dimension_hours (track_id, hour);
        CREATE TABLE batch_dimension_days (
            track_id INTEGER NOT NULL,
            day INTEGER NOT NULL,
            dimensions BLOB NOT NULL,
            PRIMARY KEY (track_id, day)
        ) WITHOUT ROWID;
        CREATE TABLE batch_dimension_months (
            track_id INTEGER NOT NULL,
            month INTEGER NOT NULL,
            dimensions BLOB NOT NULL,
            PRIMARY KEY (track_id, month)
        ) WITHOUT ROWID;
        """

    static func defineMergeFunction(_ database: Database) throws {
        try database.defineBlobFunction(mergeFunction, failureMessage: "malformed dimension counts") { first, second, out in
            DimensionEncoding.merge(first, second, into: &out)
        }
    }

    /// The batch tables of each rollup level (`RollupLevel.rawValue` indexes them).
    static let batchTables: [(table: String, key: String)] = [
        ("batch_dimension_hours", "hour"), ("batch_dimension_days", "day"), ("batch_dimension_months", "month"),
    ]

    static let batchReads: [String] = batchTables.map { table, key in
        "SELECT dimensions FROM \(table) WHERE track_id = ?1 AND \(key) >= ?2 AND \(key) < ?3"
    }

    static let realtimeRead =
        "SELECT dimensions FROM realtime_dimensions WHERE track_id = ?1 AND hour >= ?2 AND hour < ?3"

    /// Adds `rows` to the realtime layer's blobs (inside the flush's transaction).
    static func addRealtime(_ rows: [DimensionRow], _ db: Database) throws {
        guard !rows.isEmpty else { return }
        let upsert = try db.cachedStatement("""
            INSERT INTO realtime_dimensions (hour, track_id, dimensions) VALUES (?1, ?2, ?3)
            ON CONFLICT (hour, track_id) DO UPDATE SET dimensions = \(mergeFunction)(dimensions, excluded.dimensions)
            """)
        // In key order the writes sweep the table's pages once.
        for row in rows.sorted(by: { $0.hour != $1.hour ? $0.hour < $1.hour : $0.trackID < $1.trackID })
        where !row.encoded.isEmpty {
            guard row.trackID >= 1 else { throw CounterStoreError.invalidRow(trackID: row.trackID, hour: row.hour, plays: 0) }
            try upsert.bind(row.hour.index, at: 1)
            try upsert.bind(row.trackID, at: 2)
            try upsert.bind(bytes: row.encoded, at: 3)
            try upsert.execute()
        }
    }
}

/// Buffers a batch run's dimension rows, sorts each full buffer by the table's key and
/// upserts it; rows for the same (track, hour) merge.
final class BatchDimensionSink {
    private let target: Coverage
    private let capacity: Int
    private let upsert: Statement
    private var buffer: [DimensionRow] = []

    init(database: Database, target: Coverage, capacity: Int) throws {
        self.target = target
        self.capacity = max(1, capacity)
        upsert = try database.cachedStatement("""
            INSERT INTO batch_dimension_hours (hour, track_id, dimensions) VALUES (?1, ?2, ?3)
            ON CONFLICT (hour, track_id) DO UPDATE SET dimensions = \(DimensionTables.mergeFunction)(dimensions, excluded.dimensions)
            """)
    }

    func write(_ row: DimensionRow) throws {
        guard target.contains(row.hour) else {
            throw CounterStoreError.rowOutsideRange(trackID: row.trackID, hour: row.hour, range: target.ranges[0])
        }
        guard row.trackID > 0 else { throw CounterStoreError.invalidRow(trackID: row.trackID, hour: row.hour, plays: 0) }
        guard !row.encoded.isEmpty else { return }
        buffer.append(row)
        if buffer.count >= capacity { try drain() }
    }

    func finish() throws {
        try drain()
    }

    private func drain() throws {
        buffer.sort { $0.hour != $1.hour ? $0.hour < $1.hour : $0.trackID < $1.trackID }
        for row in buffer {
            try upsert.bind(row.hour.index, at: 1)
            try upsert.bind(row.trackID, at: 2)
            try upsert.bind(bytes: row.encoded, at: 3)
            try upsert.execute()
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Keeps `batch_dimension_days` and `batch_dimension_months` equal to the merged blobs of
/// `batch_dimension_hours` while a run replaces hours, as `BatchRollups` does for plays: each
/// (day) piece of the target is merged per track and subtracted before its hours are deleted,
/// and added once they are rewritten — the cost follows the hours replaced.
struct BatchDimensionRollups {
    struct Piece {
        var hours: HourRange
        var day: Int64
        var month: Int64
    }

    let db: Database
    let pieces: [Piece]
    /// Rollup rows that a subtraction may have left empty, checked by `dropEmptyBuckets`.
    private var subtracted: [(track: Int64, day: Int64, month: Int64)] = []

    init(_ db: Database, target: Coverage) {
        self.db = db
        var pieces: [Piece] = []
        for range in target.ranges {
            var cursor = range.lower
            while cursor < range.upper {
                let day = UTCCalendar.day(of: cursor)
                let end = min(range.upper, Hour(index: (day + 1) * 24))
                pieces.append(Piece(hours: HourRange(cursor, end), day: day, month: UTCCalendar.month(ofDay: day)))
                cursor = end
            }
        }
        self.pieces = pieces
    }

    /// Merges `sign` × the hours of every piece into its day and month rows.
    mutating func apply(sign: Int64) throws {
        let select = try db.cachedStatement("""
            SELECT track_id, dimensions FROM batch_dimension_hours WHERE hour >= ?1 AND hour < ?2 ORDER BY track_id
            """)
        let upserts = try ["batch_dimension_days", "batch_dimension_months"].map { table in
            try db.cachedStatement("""
                INSERT INTO \(table) VALUES (?1, ?2, ?3)
                ON CONFLICT DO UPDATE SET dimensions = \(DimensionTables.mergeFunction)(dimensions, excluded.dimensions)
                """)
        }
        var merged: [UInt8] = []
        var scratch: [UInt8] = []
        let empty: [UInt8] = []
        for piece in pieces {
            try select.bind(piece.hours.lower.index, at: 1)
            try select.bind(piece.hours.upper.index, at: 2)
            var track: Int64 = 0
            func flush() throws {
                guard track != 0 else { return }
                if sign < 0 {
                    guard Self.merge(empty, merged, sign: -1, into: &scratch) else { throw CounterStoreError.malformedDimensions(trackID: track) }
                    swap(&merged, &scratch)
                    subtracted.append((track, piece.day, piece.month))
                }
                for (statement, key) in zip(upserts, [piece.day, piece.month]) {
                    try statement.bind(track, at: 1)
                    try statement.bind(key, at: 2)
                    try statement.bind(bytes: merged, at: 3)
                    try statement.execute()
                }
            }
            do {
                while try select.step() {
                    let rowTrack = select.int64(at: 0)
                    if rowTrack != track {
                        try flush()
                        track = rowTrack
                        merged.removeAll(keepingCapacity: true)
                    }
                    let ok = select.withBytes(at: 1) { blob in
                        merged.withUnsafeBytes { DimensionEncoding.merge($0, blob, into: &scratch) }
                    }
                    guard ok else { throw CounterStoreError.malformedDimensions(trackID: track) }
                    swap(&merged, &scratch)
                }
                select.reset()
            } catch {
                select.reset()
                throw error
            }
            try flush()
        }
    }

    /// Removes rollup rows a subtraction left empty (a track that no longer plays in a rebuilt
    /// bucket), so that, as for plays, every rollup row holds something.
    func dropEmptyBuckets() throws {
        let days = try db.cachedStatement(
            "DELETE FROM batch_dimension_days WHERE track_id = ?1 AND day = ?2 AND length(dimensions) = 0")
        let months = try db.cachedStatement(
            "DELETE FROM batch_dimension_months WHERE track_id = ?1 AND month = ?2 AND length(dimensions) = 0")
        for entry in subtracted {
            try days.bind(entry.track, at: 1)
            try days.bind(entry.day, at: 2)
            try days.execute()
            try months.bind(entry.track, at: 1)
            try months.bind(entry.month, at: 2)
            try months.execute()
        }
    }

    private static func merge(_ a: [UInt8], _ b: [UInt8], sign: Int64, into out: inout [UInt8]) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in DimensionEncoding.merge(a, b, sign: sign, into: &out) } }
    }
}
