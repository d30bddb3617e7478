import CounterpointCore

/// The realtime layer's `partition_offsets` — each partition's next offset and high watermark as
/// of its last flush — read and cleared once, over any `StoreDialect`.
enum PartitionOffsets {
    /// The realtime layer's position in every partition, by topic and partition.
    static func statuses<D: StoreDialect>(_ db: D) throws -> [PartitionStatus] {
        var partitions: [PartitionStatus] = []
        try db.query("SELECT topic, partition, next_offset, high_watermark FROM partition_offsets ORDER BY topic, partition", []) { row in
            partitions.append(PartitionStatus(topic: row.string(at: 0), partition: Int32(truncatingIfNeeded: row.int64(at: 1)),
                                              nextOffset: row.int64(at: 2), highWatermark: row.optionalInt64(at: 3)))
        }
        return partitions
    }

    /// The next offset to consume, per partition of `topic`, as of the last committed flush.
    static func stored<D: StoreDialect>(topic: String, _ db: D) throws -> [Int32: Int64] {
        var offsets: [Int32: Int64] = [:]
        try db.query("SELECT partition, next_offset FROM partition_offsets WHERE topic = $1", [.text(topic)]) { row in
            offsets[Int32(truncatingIfNeeded: row.int64(at: 0))] = row.int64(at: 1)
        }
        return offsets
    }

    /// Deletes the stored offsets of `topic`; returns how many partitions had one.
    static func forget<D: StoreDialect>(topic: String, _ db: D) throws -> Int {
        var count = 0
        try db.query("DELETE FROM partition_offsets WHERE topic = $1 RETURNING partition", [.text(topic)]) { _ in count += 1 }
        return count
    }
}
