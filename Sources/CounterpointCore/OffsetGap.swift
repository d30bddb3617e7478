/// A jump in a partition's offsets, as Kafka reported it to the realtime consumer, and as
/// `/v1/status` shows it: forwards over events the broker deleted before they were read, or
/// back to an earlier offset when the partition's log ends before the one asked for (the topic
/// was made again, or the broker lost the end of its log).
public struct OffsetGap: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    /// The offset the store asked for.
    public var expectedOffset: Int64
    /// Where consumption went on: the oldest offset the broker still had.
    public var resumedOffset: Int64
    /// When the gap was noticed, epoch milliseconds.
    public var detectedAt: Int64

    public init(topic: String, partition: Int32, expectedOffset: Int64, resumedOffset: Int64, detectedAt: Int64) {
        self.topic = topic
        self.partition = partition
        self.expectedOffset = expectedOffset
        self.resumedOffset = resumedOffset
        self.detectedAt = detectedAt
    }

    /// Events between the expected and the resumed offset, never read; 0 when offsets went back.
    public var skippedEvents: Int64 { max(0, resumedOffset - expectedOffset) }

    /// Consumption went back to an earlier offset: nothing was skipped, and the offsets read
    /// again may hold other events than before.
    public var wentBack: Bool { resumedOffset < expectedOffset }
}
