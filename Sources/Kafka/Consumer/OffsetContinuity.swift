/// Notices when a partition's offsets do not continue where the consumer expected.
///
/// With `auto.offset.reset=earliest|latest` librdkafka moves on silently (bar a log line) when
/// the requested offset is gone from the broker. Counterpoint must report such gaps, so this
/// checks every message against the offset expected next: the start offset handed to
/// `assign`/`seek`, then the previous message's offset plus one. A forward jump is only a reset
/// when the broker's low watermark has passed the expected offset; otherwise the gap is
/// harmless (compacted records, transaction markers). A backward jump is always a reset.
///
/// Only the polling thread uses it.
struct OffsetContinuity {
    /// Start offsets per partition, from assignment or seek, not yet matched to a message.
    private var pendingStarts: [KafkaPartition: Int64] = [:]
    private var expected: [RDKafkaPartitionKey: (partition: KafkaPartition, next: Int64)] = [:]
    // The partition of the previous message, cached because messages arrive in runs per partition.
    private var currentKey: RDKafkaPartitionKey?
    private var currentNext: Int64 = 0

    /// Forgets everything and expects these start offsets (partitions not listed start at a logical offset).
    mutating func restart(with starts: [KafkaPartition: Int64]) {
        pendingStarts = starts
        expected = [:]
        currentKey = nil
    }

    /// After a seek, the next message of `partition` must be `offset`.
    mutating func expect(_ partition: KafkaPartition, at offset: Int64) {
        storeCurrent()
        currentKey = nil
        if let key = expected.first(where: { $0.value.partition == partition })?.key {
            expected[key] = (partition, offset)
        } else {
            pendingStarts[partition] = offset
        }
    }

    /// Checks one message; returns the jump when it is not the expected one.
    /// `lowWatermark` is asked only on a jump.
    @inline(__always)
    mutating func check(_ key: RDKafkaPartitionKey, offset: Int64, lowWatermark: (KafkaPartition) -> Int64?) -> KafkaOffsetReset? {
        if key == currentKey, offset == currentNext {
            currentNext = offset + 1
            return nil
        }
        return checkSlowly(key, offset: offset, lowWatermark: lowWatermark)
    }

    private mutating func checkSlowly(_ key: RDKafkaPartitionKey, offset: Int64, lowWatermark: (KafkaPartition) -> Int64?) -> KafkaOffsetReset? {
        storeCurrent()
        let partition: KafkaPartition
        let expectedOffset: Int64?
        if let known = expected[key] {
            (partition, expectedOffset) = (known.partition, known.next)
        } else {
            partition = KafkaPartition(topic: key.topicName, id: key.partition)
            expectedOffset = pendingStarts.removeValue(forKey: partition)
        }
        currentKey = key
        currentNext = offset + 1
        expected[key] = (partition, offset + 1)

        guard let expectedOffset, offset != expectedOffset else { return nil }
        let low = lowWatermark(partition)
        if offset > expectedOffset, let low, low <= expectedOffset {
            return nil
        }
        return KafkaOffsetReset(partition: partition, expectedOffset: expectedOffset, resumedOffset: offset, lowWatermark: low)
    }

    private mutating func storeCurrent() {
        guard let currentKey, let entry = expected[currentKey] else { return }
        expected[currentKey] = (entry.partition, currentNext)
    }
}
