import CounterpointCore
import Kafka

/// What the consumer reports about itself for `/v1/status`, beside what the store says
/// (per-partition offsets and lag are in the store with every flush).
public struct RealtimeStatus: Sendable {
    /// Consumed messages per second over the last `RealtimeConfiguration.rateWindow`.
    public var eventsPerSecond: Double
    /// Messages consumed since start (valid and rejected; re-reads after a fenced flush included).
    public var eventsConsumed: Int
    /// Rejected events by reason since start, with the most recent as samples (source `plays/3@4567`).
    public var rejections: RejectionLog
    /// The most recent offset gaps: data the broker deleted before it was consumed.
    public var offsetGaps: [OffsetGap]
    /// Events lost to offset gaps since start (the batch layer heals them).
    public var skippedEvents: Int64
    /// Flushes discarded because another consumer had written their partitions first.
    public var fencedFlushes: Int
    /// The last flush that committed; nil before the first one.
    public var lastFlush: FlushRecord?
    /// Why flushes fail, while they do (nil once one commits again).
    public var flushFailure: FlushFailure?
    /// Partitions of the topic this consumer holds now.
    public var assignedPartitions: [Int32]
}

extension OffsetGap {
    init(_ reset: KafkaOffsetReset, detectedAt: Int64) {
        self.init(topic: reset.partition.topic, partition: reset.partition.id, expectedOffset: reset.expectedOffset,
                  resumedOffset: reset.resumedOffset, detectedAt: detectedAt)
    }
}

/// One committed flush.
public struct FlushRecord: Sendable, Hashable {
    /// Epoch milliseconds, as stored with the flush.
    public var flushedAt: Int64
    /// (track, hour) rows written.
    public var rows: Int
    /// Plays added.
    public var plays: Int64
    public var duration: Duration
}

/// Flushes failing in a row: the store rolled them back (a full disk), so the consumer re-reads
/// from the last committed offsets and retries. Nothing is lost; the counts are late.
public struct FlushFailure: Sendable, Hashable {
    public var reason: String
    /// Failed flushes since the last commit.
    public var failures: Int
    /// When the first of them failed, epoch milliseconds.
    public var since: Int64
}
