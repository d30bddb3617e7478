import CounterpointCore
import Foundation
import PostgresDB

/// The realtime layer on PostgreSQL: a consumer's flushes and the compaction of covered hours.
/// Any number of these — one per `consume` process, on any machines — may write one database.
///
/// Fencing (`OffsetFence`; see docs/postgresql.md): each flush is one READ COMMITTED transaction
/// that first locks the stored offsets of its partitions (`SELECT … FOR UPDATE`, in (topic,
/// partition) order so that two writers cannot deadlock on them), or, for partitions with nothing
/// stored, inserts them with `ON CONFLICT DO NOTHING` — which waits for a concurrent inserter and
/// then reports the conflict. Either way, a row another writer changed since this one read it is
/// seen at its latest committed value, so the compare-and-set is exact without SERIALIZABLE.
///
/// Not `Sendable`: use it from one thread. After a lost connection a call throws
/// `PostgresError` (kind `.connection`) and the next call reconnects.
public final class PostgresRealtimeStore: RealtimeWriter {
    private let database: PostgresDatabase
    /// This writer's row in `realtime_flushes`: one row per writer, so that concurrent
    /// consumers do not all update (and queue on the lock of) a single "last flush" row.
    private let writerID = UUID().uuidString

    /// Connects at once, so that an unreachable or misconfigured database fails here, and
    /// creates or migrates the schema.
    public init(url: String) throws {
        database = PostgresDatabase(url: url) { connection in
            try PostgresSchema.migrate(connection)
            // The offsets commit with the counts, so a commit lost in a server crash is
            // replayed from Kafka: durability of each flush is not needed, as with SQLite's
            // synchronous=NORMAL. The WAL still keeps the database consistent.
            try connection.execute("SET synchronous_commit = off")
        }
        _ = try database.connection()
    }

    public func apply(_ rows: [CounterRows], progress: [PartitionProgress], flushedAt: Int64) throws -> FlushOutcome {
        let fence = OffsetFence(progress, flushedAt: flushedAt)
        do {
            try retryingConflicts {
                try database.withConnection { connection in
                    try connection.write(isolation: .readCommitted) { db in
                        let dialect = PostgresDialect(db)
                        try fence.lock(dialect)
                        for kindRows in rows { try dialect.add(kindRows) }
                        try fence.advance(dialect)
                        let change = try db.query("""
                            INSERT INTO realtime_flushes (writer, flushed_at, stamps) VALUES ($1, $2, true)
                            ON CONFLICT (writer) DO UPDATE SET flushed_at = excluded.flushed_at
                            RETURNING txid_current()
                            """, [writerID, flushedAt]).singleInt64 ?? 0
                        // Last, so that writers touching the same hour queue on its stamp only at
                        // their ends, and in ascending hour order in every writer.
                        try RealtimeHourStamps.stamp(hours: rows.firstKeyValues, change: change, dialect)
                    }
                }
            }
            return .committed
        } catch let stale as OffsetFence.Stale {
            return .fenced(stale, of: progress)
        }
    }

    public func storedOffsets(topic: String) throws -> [Int32: Int64] {
        try database.withConnection { connection in
            try connection.read { try PartitionOffsets.stored(topic: topic, PostgresDialect($0)) }
        }
    }

    public func forgetOffsets(topic: String) throws -> Int {
        try database.withConnection { connection in
            try connection.write { try PartitionOffsets.forget(topic: topic, PostgresDialect($0)) }
        }
    }

    /// One short READ COMMITTED transaction: it reads the coverage committed when it starts (the
    /// batch layer is in the same database; coverage only grows), deletes at most `maxRows` rows
    /// of those hours (`RealtimeCompaction`: oldest first, the creators' first, payloads with
    /// them) and stamps the hours it deleted from.
    public func compactCoveredHours(maxRows: Int) throws -> Int {
        try retryingConflicts {
            try database.withConnection { connection in
                try connection.write(isolation: .readCommitted) { db in
                    let dialect = PostgresDialect(db)
                    let coverage = try BatchRecords.coverage(dialect)
                    let deleted = try RealtimeCompaction.delete(covered: coverage, maxRows: maxRows, dialect)
                    if !deleted.from.isEmpty {
                        let change = try db.query("SELECT txid_current()", []).singleInt64 ?? 0
                        try RealtimeHourStamps.stampDeletions(in: deleted.from, change: change, dialect)
                    }
                    try forgetSilentWriters(db)
                    return deleted.rows
                }
            }
        }
    }

    /// Forgets the rows of writers gone for a day, which no longer say anything about freshness,
    /// and those of writers that do not stamp hours (an older version) once silent for 15
    /// minutes; after the last of those, every hour is stamped again, and readers trust the
    /// stamps from then on.
    private func forgetSilentWriters(_ db: PostgresConnection) throws {
        let forgotten = try db.query("""
            WITH latest AS (SELECT max(flushed_at) AS at FROM realtime_flushes)
            DELETE FROM realtime_flushes USING latest
            WHERE flushed_at < latest.at - 86400000 OR (NOT stamps AND flushed_at < latest.at - 900000)
            RETURNING stamps::int
            """, [])
        guard (0..<forgotten.rowCount).contains(where: { forgotten.int64(row: $0, column: 0) == 0 }),
              try db.query("SELECT count(*) FROM realtime_flushes WHERE NOT stamps", []).singleInt64 == 0 else { return }
        let change = try db.query("SELECT txid_current()", []).singleInt64 ?? 0
        try RealtimeHourStamps.stampEveryHour(change: change, PostgresDialect(db))
    }
}

@available(*, unavailable)
extension PostgresRealtimeStore: Sendable {}
