import CounterpointCore

/// How far a flush consumed one Kafka partition.
public struct PartitionProgress: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    /// The next offset this flush started from, as the consumer believes it is stored:
    /// nil when nothing is stored yet for the partition. The flush commits only if it matches.
    public var startOffset: Int64?
    /// The next offset to consume after this flush.
    public var nextOffset: Int64
    /// The partition's high watermark when the flush was taken, if known (for lag).
    public var highWatermark: Int64?

    public init(topic: String, partition: Int32, startOffset: Int64?, nextOffset: Int64, highWatermark: Int64?) {
        self.topic = topic
        self.partition = partition
        self.startOffset = startOffset
        self.nextOffset = nextOffset
        self.highWatermark = highWatermark
    }
}

/// What became of a flush.
public enum FlushOutcome: Sendable, Equatable {
    case committed
    /// Nothing was written: for these partitions the stored next offset was not the flush's
    /// start offset — another consumer has written them since (a rebalance), so this
    /// consumer's view is stale and it must re-read `storedOffsets` before going on.
    case fenced(partitions: [Int32])
}
