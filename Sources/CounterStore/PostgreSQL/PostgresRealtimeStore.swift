import CounterpointCore
import Foundation
import PostgresDB

/// The realtime layer on PostgreSQL: a consumer's flushes and the compaction of covered hours.
/// Any number of these — one per `consume` process, on any machines — may write one database.
///
/// Fencing (see docs/postgresql.md): each flush is one READ COMMITTED transaction that first
/// locks the stored offsets of its partitions (`SELECT … FOR UPDATE`, in (topic, partition)
/// order so that two writers cannot deadlock on them), or, for partitions with nothing stored,
/// inserts them with `ON CONFLICT DO NOTHING` — which waits for a concurrent inserter and then
/// reports the conflict. Either way, a row another writer changed since this one read it is
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

    private struct Fenced: Error {
        var partitions: Set<Int32>
    }

    public func apply(_ rows: [CounterRows], progress: [PartitionProgress], flushedAt: Int64) throws -> FlushOutcome {
        let ordered = progress.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        do {
            try retryingConflicts {
                try database.withConnection { connection in
                    try connection.write(isolation: .readCommitted) { db in
                        try fence(ordered, flushedAt: flushedAt, db)
                        for kindRows in rows { try PostgresDialect(db).add(kindRows) }
                        try advance(ordered, flushedAt: flushedAt, db)
                        let change = try db.query("""
                            INSERT INTO realtime_flushes (writer, flushed_at, stamps) VALUES ($1, $2, true)
                            ON CONFLICT (writer) DO UPDATE SET flushed_at = excluded.flushed_at
                            RETURNING txid_current()
                            """, [writerID, flushedAt]).singleInt64 ?? 0
                        // Last, so that writers touching the same hour queue on its stamp only at
                        // their ends, and in ascending hour order in every writer.
                        try RealtimeHourStamps.stamp(hours: rows.firstKeyValues, change: change, PostgresDialect(db))
                    }
                }
            }
            return .committed
        } catch let fenced as Fenced {
            return .fenced(partitions: progress.map(\.partition).filter { fenced.partitions.contains($0) })
        }
    }

    /// Locks or claims every partition of the flush; throws `Fenced` (rolling the transaction
    /// back) when any stored next offset is not the flush's start offset. One statement per
    /// topic for each kind, whatever the number of partitions: a flush of 64 partitions takes
    /// the same few round trips as a flush of one.
    private func fence(_ progress: [PartitionProgress], flushedAt: Int64, _ db: PostgresConnection) throws {
        var stale: Set<Int32> = []
        for (topic, partitions) in Self.byTopic(progress) {
            let stored = partitions.filter { $0.startOffset != nil }
            if !stored.isEmpty {
                // Rows are locked in the sorted order (the lock is taken above the sort), the
                // same order in every writer.
                let result = try db.query("""
                    SELECT partition, next_offset FROM partition_offsets
                    WHERE topic = $1 AND partition = ANY($2::bigint[]) ORDER BY partition FOR UPDATE
                    """, [topic, PostgresInt64Array(stored.map { Int64($0.partition) })])
                var found: [Int32: Int64] = [:]
                for row in 0..<result.rowCount {
                    found[Int32(truncatingIfNeeded: result.int64(row: row, column: 0))] = result.int64(row: row, column: 1)
                }
                for partition in stored where found[partition.partition] != partition.startOffset {
                    stale.insert(partition.partition)
                }
            }
            let fresh = partitions.filter { $0.startOffset == nil }
            if !fresh.isEmpty {
                // Nothing stored yet: the rows are created with this flush's values, except those
                // another writer created first (they are not returned).
                let result = try db.query("""
                    INSERT INTO partition_offsets (topic, partition, next_offset, high_watermark, flushed_at)
                    SELECT $1, p, n, w, $5 FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS u (p, n, w)
                    ORDER BY p
                    ON CONFLICT (topic, partition) DO NOTHING RETURNING partition
                    """, [topic, PostgresInt64Array(fresh.map { Int64($0.partition) }),
                          PostgresInt64Array(fresh.map(\.nextOffset)), PostgresInt64Array(fresh.map(\.highWatermark)), flushedAt])
                let inserted = Set((0..<result.rowCount).map { Int32(truncatingIfNeeded: result.int64(row: $0, column: 0)) })
                for partition in fresh where !inserted.contains(partition.partition) { stale.insert(partition.partition) }
            }
        }
        if !stale.isEmpty { throw Fenced(partitions: stale) }
    }

    /// Moves the fenced partitions' next offsets (those `fence` locked; the claimed ones were
    /// inserted with their values), one statement per topic.
    private func advance(_ progress: [PartitionProgress], flushedAt: Int64, _ db: PostgresConnection) throws {
        for (topic, partitions) in Self.byTopic(progress) {
            let stored = partitions.filter { $0.startOffset != nil }
            guard !stored.isEmpty else { continue }
            try db.query("""
                UPDATE partition_offsets o SET next_offset = u.n, high_watermark = u.w, flushed_at = $5
                FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS u (p, n, w)
                WHERE o.topic = $1 AND o.partition = u.p
                """, [topic, PostgresInt64Array(stored.map { Int64($0.partition) }),
                      PostgresInt64Array(stored.map(\.nextOffset)), PostgresInt64Array(stored.map(\.highWatermark)), flushedAt])
        }
    }

    /// `progress` (already in (topic, partition) order) split by topic, topics in order.
    private static func byTopic(_ progress: [PartitionProgress]) -> [(String, [PartitionProgress])] {
        var groups: [(String, [PartitionProgress])] = []
        for partition in progress {
            if groups.last?.0 == partition.topic { groups[groups.count - 1].1.append(partition) } else {
                groups.append((partition.topic, [partition]))
            }
        }
        return groups
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

    /// One short transaction: it deletes at most `maxRows` rows in the coverage committed when its
    /// statement starts (the batch layer is in the same database), their dimension counts and
    /// listener sketches with them (columns of the same rows), and stamps the hours it deleted from.
    public func compactCoveredHours(maxRows: Int) throws -> Int {
        try retryingConflicts {
            try database.withConnection { connection in
                try connection.write(isolation: .readCommitted) { db in
                    var deleted = 0
                    var deletedFrom: (lower: Int64, upper: Int64)?
                    var change: Int64 = 0
                    for kind in SubjectKind.allCases.reversed() where deleted < maxRows {
                        let table = Catalogue.realtime(kind)
                        let gone = try db.query("""
                            WITH gone AS (
                                DELETE FROM \(table.name) WHERE (hour, \(table.idColumn)) IN (
                                    SELECT r.hour, r.\(table.idColumn) FROM coverage c
                                    JOIN \(table.name) r ON r.hour >= c.lower AND r.hour < c.upper
                                    LIMIT $1)
                                RETURNING hour)
                            SELECT count(*)::bigint, min(hour), max(hour), txid_current() FROM gone
                            """, [max(0, maxRows - deleted)])
                        let rows = Int(gone.singleInt64 ?? 0)
                        guard rows > 0 else { continue }
                        deleted += rows
                        let (lower, upper) = (gone.int64(row: 0, column: 1), gone.int64(row: 0, column: 2) + 1)
                        deletedFrom = deletedFrom.map { (Swift.min($0.lower, lower), Swift.max($0.upper, upper)) } ?? (lower, upper)
                        change = gone.int64(row: 0, column: 3)
                    }
                    if let deletedFrom {
                        // The hours from the first to the last it deleted from, in one statement:
                        // an hour in between that it did not change is only read again by readers.
                        try RealtimeHourStamps.stampDeletions(lower: deletedFrom.lower, upper: deletedFrom.upper, change: change,
                                                              PostgresDialect(db))
                    }
                    try forgetSilentWriters(db)
                    return deleted
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
