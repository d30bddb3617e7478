import CounterpointCore
import SQLiteDB

/// The single writer of realtime.sqlite: the consumer's flushes and the compaction of rows
/// the batch layer has made obsolete. Not `Sendable`: use it from one thread.
public final class SQLiteRealtimeStore: RealtimeWriter {
    private let database: Database
    private let location: StoreLocation
    private let configuration: DatabaseConfiguration
    /// A read-only connection to batch.sqlite, for the coverage that compaction follows.
    private var batch: Database?

    public init(location: StoreLocation, configuration: DatabaseConfiguration = .default) throws {
        try StoreFile.createDirectory(location.directory)
        database = try StoreFile.openWriter(path: location.realtimePath, schema: .realtime, configuration: configuration)
        self.location = location
        self.configuration = configuration
    }

    /// Adds `rows` (plays and payloads, one row per (hour, track)) to the counters and records
    /// `progress` — in ONE transaction, so that after a crash the stored offsets say exactly
    /// which plays are counted.
    ///
    /// Fencing (`OffsetFence`): the flush commits only if, for every partition in `progress`, the
    /// stored next offset equals `startOffset` (nil meaning "none stored"), a compare-and-set as
    /// Apache Druid's Kafka ingestion does on its metadata. Otherwise another consumer has flushed
    /// those partitions since this one read them: nothing is written and `.fenced` names them.
    public func apply(_ rows: [CounterRows], progress: [PartitionProgress], flushedAt: Int64) throws -> FlushOutcome {
        let fence = OffsetFence(progress, flushedAt: flushedAt)
        do {
            try database.write { db in
                let dialect = SQLiteDialect(db)
                try fence.lock(dialect)
                for kindRows in rows { try dialect.add(kindRows) }
                try fence.advance(dialect)
                let change = try countChange(flushedAt: flushedAt, db)
                try RealtimeHourStamps.stamp(hours: rows.firstKeyValues, change: change, dialect)
            }
            return .committed
        } catch let stale as OffsetFence.Stale {
            return .fenced(stale, of: progress)
        }
    }

    /// Counts a commit that changed realtime rows in `last_flush` (the reader's
    /// `realtimeVersion`; with the flush's time for a flush) and returns the new count, the stamp
    /// of the hours it changed (`RealtimeHourStamps`).
    private func countChange(flushedAt: Int64?, _ db: Database) throws -> Int64 {
        let dialect = SQLiteDialect(db)
        var (changes, stamped): (Int64, Int64) = (0, 0)
        try dialect.query("SELECT changes, stamped FROM last_flush WHERE id = 1", []) { row in
            (changes, stamped) = (row.int64(at: 0), row.int64(at: 1))
        }
        let change = changes + 1
        // Changes a writer of an older version committed left some stamps behind.
        if stamped != changes { try RealtimeHourStamps.stampEveryHour(change: change, dialect) }
        if let flushedAt {
            try dialect.run("""
                INSERT INTO last_flush (id, flushed_at, changes, stamped) VALUES (1, $1, $2, $2)
                ON CONFLICT (id) DO UPDATE SET flushed_at = excluded.flushed_at, changes = excluded.changes,
                    stamped = excluded.stamped
                """, .integer(flushedAt), .integer(change))
        } else {
            try dialect.run("UPDATE last_flush SET changes = $1, stamped = $1 WHERE id = 1", .integer(change))
        }
        return change
    }

    public func storedOffsets(topic: String) throws -> [Int32: Int64] {
        try database.read { try PartitionOffsets.stored(topic: topic, SQLiteDialect($0)) }
    }

    public func forgetOffsets(topic: String) throws -> Int {
        try database.write { try PartitionOffsets.forget(topic: topic, SQLiteDialect($0)) }
    }

    public func compactCoveredHours(maxRows: Int) throws -> Int {
        if batch == nil {
            batch = try StoreFile.openReader(path: location.batchPath, schema: .batch, configuration: configuration)
        }
        let coverage = try batch!.read { try BatchRecords.coverage(SQLiteDialect($0)) }
        return try compact(coverage: coverage, maxRows: maxRows)
    }

    /// Deletes up to `maxRows` realtime rows of the hours `coverage` holds in one transaction
    /// (`RealtimeCompaction`: oldest first, the creators' first, payloads with them). Returns the
    /// number of rows deleted.
    @discardableResult
    public func compact(coverage: Coverage, maxRows: Int = .max) throws -> Int {
        try database.write { db in
            let dialect = SQLiteDialect(db)
            let deleted = try RealtimeCompaction.delete(covered: coverage, maxRows: maxRows, dialect)
            if !deleted.from.isEmpty {
                let change = try countChange(flushedAt: nil, db)
                try RealtimeHourStamps.stampDeletions(in: deleted.from, change: change, dialect)
            }
            return deleted.rows
        }
    }
}

@available(*, unavailable)
extension SQLiteRealtimeStore: Sendable {}
