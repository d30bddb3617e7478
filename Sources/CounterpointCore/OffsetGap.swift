/// A jump in a partition's offsets that skipped (or repeated) events, as Kafka reported it to
/// the realtime consumer, and as `/v1/status` shows it.
public struct OffsetGap: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    /// The offset the store asked for.
    public var expectedOffset: Int64
    /// Where consumption went on: the oldest offset the broker still had.
    public var resumedOffset: Int64
    /// `resumedOffset − expectedOffset`: negative when events are read again.
    public var skippedEvents: Int64
    /// When the gap was noticed, epoch milliseconds.
    public var detectedAt: Int64

    public init(topic: String, partition: Int32, expectedOffset: Int64, resumedOffset: Int64, skippedEvents: Int64,
                detectedAt: Int64) {
        self.topic = topic
        self.partition = partition
        self.expectedOffset = expectedOffset
        self.resumedOffset = resumedOffset
        self.skippedEvents = skippedEvents
        self.detectedAt = detectedAt
    }
}
