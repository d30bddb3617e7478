/// The compare-and-set that fences a realtime flush on `partition_offsets`, written once over
/// any `StoreDialect`, inside the flush's transaction: `lock`, before the flush's rows are added,
/// reads the stored next offset of each of its partitions and locks that row
/// (`StoreDialect.rowLockClause`), or, for a partition with nothing stored, claims the row by
/// inserting it with the flush's values; `advance`, after the rows, moves the locked partitions'
/// offsets. A partition whose stored next offset is not the flush's start offset (nil meaning
/// "none stored") makes `lock` throw `Stale`, and the caller's transaction rolls back: another
/// consumer has flushed that partition since this one read it.
///
/// Why it is exact with concurrent writers under READ COMMITTED, without SERIALIZABLE
/// (PostgreSQL; see docs/postgresql.md): a locked row is read at its latest committed value, and
/// an insert that conflicts (`ON CONFLICT DO NOTHING`) waits for a concurrent inserter and then
/// reports the conflict by not returning the row. Rows are locked and claimed in (topic,
/// partition) order, the same in every writer, so two writers cannot deadlock on them. On SQLite
/// the write transaction is the only writer, and the same statements are exact as they stand.
///
/// One statement per topic for each step, whatever the number of partitions: a flush of 64
/// partitions takes the same few round trips as a flush of one.
struct OffsetFence {
    /// The partitions whose stored next offset was not the flush's start offset.
    struct Stale: Error {
        var partitions: Set<Int32>
    }

    /// The flush's partitions of one topic, in order: those with a stored next offset (locked,
    /// then advanced) and those with none (claimed).
    private struct Topic {
        var name: String
        var stored: [PartitionProgress] = []
        var fresh: [PartitionProgress] = []
    }

    /// Topics in order.
    private let topics: [Topic]
    private let flushedAt: Int64

    init(_ progress: [PartitionProgress], flushedAt: Int64) {
        var topics: [Topic] = []
        for partition in progress.sorted(by: { ($0.topic, $0.partition) < ($1.topic, $1.partition) }) {
            if topics.last?.name != partition.topic { topics.append(Topic(name: partition.topic)) }
            if partition.startOffset == nil { topics[topics.count - 1].fresh.append(partition) } else {
                topics[topics.count - 1].stored.append(partition)
            }
        }
        self.topics = topics
        self.flushedAt = flushedAt
    }

    /// Locks or claims every partition of the flush; throws `Stale` when any stored next offset
    /// is not the flush's start offset.
    func lock<D: StoreDialect>(_ db: D) throws {
        var stale: Set<Int32> = []
        for topic in topics {
            let stored = topic.stored
            if !stored.isEmpty {
                // Rows are locked in the sorted order (the lock is taken above the sort), the
                // same order in every writer.
                let list = stored.indices.map { "$\($0 + 2)" }.joined(separator: ", ")
                var found: [Int32: Int64] = [:]
                try db.query("""
                    SELECT partition, next_offset FROM partition_offsets WHERE topic = $1 AND partition IN (\(list))
                    ORDER BY partition \(D.rowLockClause)
                    """, [.text(topic.name)] + stored.map { .integer(Int64($0.partition)) }) { row in
                    found[Int32(truncatingIfNeeded: row.int64(at: 0))] = row.int64(at: 1)
                }
                for partition in stored where found[partition.partition] != partition.startOffset {
                    stale.insert(partition.partition)
                }
            }
            let fresh = topic.fresh
            if !fresh.isEmpty {
                // Nothing stored yet: the rows are created with this flush's values, in order,
                // except those another writer created first (they are not returned).
                let (rows, values) = offsetRows(topic.name, fresh)
                var inserted: Set<Int32> = []
                try db.query("""
                    INSERT INTO partition_offsets (topic, partition, next_offset, high_watermark, flushed_at) VALUES \(rows)
                    ON CONFLICT (topic, partition) DO NOTHING RETURNING partition
                    """, values) { row in
                    inserted.insert(Int32(truncatingIfNeeded: row.int64(at: 0)))
                }
                for partition in fresh where !inserted.contains(partition.partition) { stale.insert(partition.partition) }
            }
        }
        if !stale.isEmpty { throw Stale(partitions: stale) }
    }

    /// Moves the next offsets of the partitions `lock` locked (those it claimed were inserted
    /// with their values). The rows exist and are this transaction's, so the upsert updates them.
    func advance<D: StoreDialect>(_ db: D) throws {
        for topic in topics where !topic.stored.isEmpty {
            let (rows, values) = offsetRows(topic.name, topic.stored)
            try db.run("""
                INSERT INTO partition_offsets (topic, partition, next_offset, high_watermark, flushed_at) VALUES \(rows)
                ON CONFLICT (topic, partition) DO UPDATE SET next_offset = excluded.next_offset,
                    high_watermark = excluded.high_watermark, flushed_at = excluded.flushed_at
                """, values)
        }
    }

    /// The `VALUES` rows of `partitions` of `topic` as this flush leaves them, with their
    /// parameters: the topic is $1 and the flush time $2 in every row.
    private func offsetRows(_ topic: String, _ partitions: [PartitionProgress]) -> (String, [SQLValue]) {
        let rows = partitions.indices.map { "($1, $\(3 * $0 + 3), $\(3 * $0 + 4), $\(3 * $0 + 5), $2)" }.joined(separator: ", ")
        let values: [SQLValue] = [.text(topic), .integer(flushedAt)]
            + partitions.flatMap { [.integer(Int64($0.partition)), .integer($0.nextOffset), SQLValue($0.highWatermark)] }
        return (rows, values)
    }
}

extension FlushOutcome {
    /// The outcome of a flush of `progress` that `stale` fenced: the stale partitions in the
    /// order of `progress`.
    static func fenced(_ stale: OffsetFence.Stale, of progress: [PartitionProgress]) -> FlushOutcome {
        .fenced(partitions: progress.map(\.partition).filter { stale.partitions.contains($0) })
    }
}
