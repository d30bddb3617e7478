import CounterpointCore
import SQLiteDB

/// The single writer of realtime.sqlite: the consumer's flushes and the compaction of rows
/// the batch layer has made obsolete. Not `Sendable`: use it from one thread.
public final class RealtimeStore {
    private let database: Database

    public init(location: StoreLocation, configuration: DatabaseConfiguration = .default) throws {
        try StoreFile.createDirectory(location.directory)
        database = try StoreFile.openWriter(path: location.realtimePath, schema: .realtime, configuration: configuration)
    }

    /// Adds `increments` to the counters and records `progress` — in ONE transaction, so that
    /// after a crash the stored offsets say exactly which plays are counted.
    ///
    /// Fencing: the flush commits only if, for every partition in `progress`, the stored next
    /// offset equals `startOffset` (nil meaning "none stored"), a compare-and-set as Apache
    /// Druid's Kafka ingestion does on its metadata. Otherwise another consumer has flushed
    /// those partitions since this one read them: nothing is written and `.fenced` names them.
    public func apply(increments: some Collection<CountIncrement>, progress: [PartitionProgress],
                      flushedAt: Int64) throws -> FlushOutcome {
        // Ordered by the index (track_id, hour) the writes touch pages in one sweep; within an
        // hour that is also the table's order.
        if let invalid = increments.first(where: { $0.trackID < 1 || $0.plays < 0 }) {
            throw CounterStoreError.invalidRow(trackID: invalid.trackID, hour: invalid.hour, plays: invalid.plays)
        }
        let ordered = increments.filter { $0.plays > 0 }
            .sorted { ($0.trackID, $0.hour.index) < ($1.trackID, $1.hour.index) }
        return try database.write { db in
            let stale = try staleOffsets(progress, db)
            guard stale.isEmpty else { return .fenced(partitions: stale) }

            let upsert = try GroupedUpsert(db, firstRowParameter: 1) { values in
                """
                INSERT INTO realtime_counts (hour, track_id, plays) VALUES \(values)
                ON CONFLICT (hour, track_id) DO UPDATE SET plays = plays + excluded.plays
                """
            }
            try upsert.write(ordered) { ($0.hour.index, $0.trackID, $0.plays) }

            let saveOffset = try db.cachedStatement("""
                INSERT INTO partition_offsets (topic, partition, next_offset, high_watermark, flushed_at)
                VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (topic, partition) DO UPDATE SET next_offset = excluded.next_offset,
                    high_watermark = excluded.high_watermark, flushed_at = excluded.flushed_at
                """)
            for partition in progress {
                try saveOffset.bind(partition.topic, at: 1)
                try saveOffset.bind(Int64(partition.partition), at: 2)
                try saveOffset.bind(partition.nextOffset, at: 3)
                try saveOffset.bind(partition.highWatermark, at: 4)
                try saveOffset.bind(flushedAt, at: 5)
                try saveOffset.execute()
            }

            let saveFlush = try db.cachedStatement("""
                INSERT INTO last_flush (id, flushed_at) VALUES (1, ?1)
                ON CONFLICT (id) DO UPDATE SET flushed_at = excluded.flushed_at
                """)
            try saveFlush.bind(flushedAt, at: 1)
            try saveFlush.execute()
            return .committed
        }
    }

    /// The partitions whose stored next offset is not the flush's start offset.
    private func staleOffsets(_ progress: [PartitionProgress], _ db: Database) throws -> [Int32] {
        let select = try db.cachedStatement("SELECT next_offset FROM partition_offsets WHERE topic = ?1 AND partition = ?2")
        var stale: [Int32] = []
        for partition in progress {
            try select.bind(partition.topic, at: 1)
            try select.bind(Int64(partition.partition), at: 2)
            if try select.singleInt64() != partition.startOffset {
                stale.append(partition.partition)
            }
        }
        return stale
    }

    /// The next offset to consume, per partition of `topic`, as of the last committed flush.
    public func storedOffsets(topic: String) throws -> [Int32: Int64] {
        let select = try database.cachedStatement("SELECT partition, next_offset FROM partition_offsets WHERE topic = ?1")
        try select.bind(topic, at: 1)
        var offsets: [Int32: Int64] = [:]
        try select.forEachRow { row in
            offsets[Int32(truncatingIfNeeded: row.int64(at: 0))] = row.int64(at: 1)
        }
        return offsets
    }

    /// Deletes the realtime rows of covered hours, which the merge rule never reads. Works a
    /// day of hours per transaction, so that flushes interleave with a long compaction.
    /// Returns the number of rows deleted.
    @discardableResult
    public func compact(coverage: Coverage) throws -> Int {
        let firstHour = try database.cachedStatement(
            "SELECT min(hour) FROM realtime_counts WHERE hour >= ?1 AND hour < ?2")
        let deleteHours = try database.cachedStatement(
            "DELETE FROM realtime_counts WHERE hour >= ?1 AND hour < ?2")
        var deleted = 0
        for covered in coverage.ranges {
            var cursor = covered.lower.index
            while cursor < covered.upper.index {
                try firstHour.bind(cursor, at: 1)
                try firstHour.bind(covered.upper.index, at: 2)
                guard let first = try firstHour.singleInt64() else { break }
                let end = min(first + Self.compactionHoursPerTransaction, covered.upper.index)
                deleted += try database.write { db in
                    try deleteHours.bind(first, at: 1)
                    try deleteHours.bind(end, at: 2)
                    try deleteHours.execute()
                    return db.changes
                }
                cursor = end
            }
        }
        return deleted
    }

    static let compactionHoursPerTransaction: Int64 = 24
}

@available(*, unavailable)
extension RealtimeStore: Sendable {}
