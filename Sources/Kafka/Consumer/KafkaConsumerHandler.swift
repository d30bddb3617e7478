/// What a `KafkaConsumer` calls, always on the thread running `KafkaConsumer.run`.
///
/// An error thrown from any method stops the consumer: it leaves the group without calling
/// the handler again, and `run` rethrows the error.
public protocol KafkaConsumerHandler {
    /// The group gave this consumer `partitions`. Return the offset to start each from, as kept
    /// in the caller's store; partitions left out start per `autoOffsetReset` — not at the group's
    /// committed offsets, which a caller keeping its progress in Kafka returns from
    /// `KafkaConsumer.committedOffsets(for:)`.
    func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64]

    /// `partitions` are about to be taken away: the last chance to save their progress. No
    /// message of theirs arrives after this returns (until they are assigned again).
    func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws

    /// Messages, valid only during this call.
    func consume(_ batch: KafkaMessageBatch) throws

    /// A partition did not continue where expected: the broker no longer had the requested
    /// offset (retention deleted it) or never had it, and librdkafka resumed elsewhere.
    /// Called before the batch that holds the first message after the jump.
    func offsetReset(_ reset: KafkaOffsetReset) throws

    /// A poll returned no messages: time for work on a timer, such as flushing.
    func idle() throws
}

extension KafkaConsumerHandler {
    public func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws {}
    public func offsetReset(_ reset: KafkaOffsetReset) throws {}
    public func idle() throws {}
}

public enum KafkaRevocationReason: Sendable, Equatable {
    /// The group is rebalancing; the partitions may come back to this consumer or go to another.
    case rebalance
    /// The consumer is closing.
    case closing
    /// The group already gave the partitions to another member (this one missed its session
    /// timeout): work saved now may overlap with the new owner's.
    case lost
}

/// A jump in a partition's offsets that the data on the broker explains, not the consumer.
public struct KafkaOffsetReset: Sendable, Equatable, CustomStringConvertible {
    public var partition: KafkaPartition
    /// The offset the consumer was about to read: the start offset it was given, or the one after the last message.
    public var expectedOffset: Int64
    /// The offset of the first message after the jump.
    public var resumedOffset: Int64
    /// The oldest offset the broker still had, when known.
    public var lowWatermark: Int64?

    public init(partition: KafkaPartition, expectedOffset: Int64, resumedOffset: Int64, lowWatermark: Int64?) {
        self.partition = partition
        self.expectedOffset = expectedOffset
        self.resumedOffset = resumedOffset
        self.lowWatermark = lowWatermark
    }

    /// Messages between the expected and the resumed offset that will never be consumed; 0
    /// when the consumer went back (`wentBack`).
    public var skippedMessages: Int64 { max(0, resumedOffset - expectedOffset) }

    /// The partition's log ended before the expected offset, so consumption went back to an
    /// earlier one: the topic was deleted and made again (as an embedded broker's is at each
    /// start) or the broker lost the end of its log. Nothing was skipped; the offsets from
    /// `resumedOffset` on may hold other events than the ones read there before.
    public var wentBack: Bool { resumedOffset < expectedOffset }

    public var description: String {
        "\(partition): expected offset \(expectedOffset), resumed at \(resumedOffset)"
            + (wentBack ? " (went back \(expectedOffset - resumedOffset) offsets)" : " (\(skippedMessages) messages skipped)")
    }
}
