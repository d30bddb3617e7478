import CounterpointCore
import SQLiteDB

/// The dimension counts of both SQLite layers (SPEC §3: "each layer also keeps, per (track,
/// hour), the waveform histogram and the breakdowns"): one `DimensionEncoding` blob per
/// (track, hour) beside each counts row, written in the same transactions as the counts.
///
/// The batch layer keeps them in a column of its hour, day and month rows. The realtime layer
/// keeps a table of its own, keyed (hour, track_id) like its counts so that compaction deletes
/// both with the same bounds, and indexed (track_id, hour) for the reader.
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

    /// Batch dimension counts live in the rows of `batch_hours`, `batch_days` and `batch_months`:
    /// no second key and index per row, and a batch run writes each (track, hour) once. NULL
    /// (rows written before this migration) means none.
    static let batchMigration = """
        ALTER TABLE batch_hours ADD COLUMN dimensions BLOB;
        ALTER TABLE batch_days ADD COLUMN dimensions BLOB;
        ALTER TABLE batch_months ADD COLUMN dimensions BLOB;
        """

    static func defineMergeFunction(_ database: Database) throws {
        try database.defineBlobFunction(mergeFunction, failureMessage: "malformed dimension counts") { first, second, out in
            DimensionEncoding.merge(first, second, into: &out)
        }
    }

    /// The batch tables of each rollup level (`RollupLevel.rawValue` indexes them).
    static let batchTables: [(table: String, key: String)] = [("batch_hours", "hour"), ("batch_days", "day"), ("batch_months", "month")]

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
