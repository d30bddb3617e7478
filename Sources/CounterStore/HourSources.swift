import CounterpointCore
import SQLiteDB

/// What one covered hour was computed from: a fingerprint of its input files (see
/// `BatchJob`'s `SourceFingerprint` for what goes into it), and how many files and bytes
/// those were. The incremental batch rebuilds an hour when the fingerprint of its files on
/// disk differs from the recorded one, or when none is recorded.
public struct HourSource: Sendable, Hashable {
    public var hour: Hour
    /// Opaque to the store: equal fingerprints mean unchanged input.
    public var fingerprint: String
    public var files: Int
    public var bytes: Int64

    public init(hour: Hour, fingerprint: String, files: Int, bytes: Int64) {
        self.hour = hour
        self.fingerprint = fingerprint
        self.files = files
        self.bytes = bytes
    }
}

/// The `hour_sources` table: one row per hour a run covered and recorded sources for,
/// written in the run's transaction so a recorded source always describes the rows beside it.
enum HourSourcesTable {
    static func save(_ sources: [HourSource], runID: Int64, _ db: Database) throws {
        guard !sources.isEmpty else { return }
        let upsert = try db.cachedStatement("""
            INSERT INTO hour_sources (hour, fingerprint, files, bytes, run_id) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (hour) DO UPDATE SET fingerprint = excluded.fingerprint, files = excluded.files,
                                             bytes = excluded.bytes, run_id = excluded.run_id
            """)
        for source in sources {
            try upsert.bind(source.hour.index, at: 1)
            try upsert.bind(source.fingerprint, at: 2)
            try upsert.bind(Int64(source.files), at: 3)
            try upsert.bind(source.bytes, at: 4)
            try upsert.bind(runID, at: 5)
            try upsert.execute()
        }
    }

    static func load(_ db: Database) throws -> [Hour: HourSource] {
        var sources: [Hour: HourSource] = [:]
        try db.cachedStatement("SELECT hour, fingerprint, files, bytes FROM hour_sources").forEachRow { row in
            let hour = Hour(index: row.int64(at: 0))
            sources[hour] = HourSource(hour: hour, fingerprint: row.string(at: 1), files: row.int(at: 2),
                                       bytes: row.int64(at: 3))
        }
        return sources
    }
}
