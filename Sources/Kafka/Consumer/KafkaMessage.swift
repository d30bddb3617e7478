/// One consumed message, borrowed from librdkafka: it and its `key` and `value` buffers are
/// valid only during the `KafkaConsumerHandler.consume` call that received it. Copy what
/// must outlive the call (`Array(message.value!)`).
public struct KafkaMessage {
    let raw: RDKafkaMessagePointer

    /// Builds the topic name on every access; compare `partition` first where speed matters.
    public var topic: String { raw.topicName }
    public var partition: Int32 { raw.partition }
    public var offset: Int64 { raw.offset }

    /// nil when the message has no key.
    public var key: UnsafeRawBufferPointer? { raw.key }

    /// nil for a tombstone (a message whose value is null), empty for an empty value.
    public var value: UnsafeRawBufferPointer? { raw.payload }

    /// Milliseconds since the epoch, as set by the producer or the broker; nil if unknown.
    public var timestampMilliseconds: Int64? { raw.timestampMilliseconds }
}

/// The messages of one poll, in the order of each partition's offsets, borrowed like `KafkaMessage`.
public struct KafkaMessageBatch: RandomAccessCollection {
    let messages: UnsafeBufferPointer<RDKafkaMessagePointer?>

    public var startIndex: Int { 0 }
    public var endIndex: Int { messages.count }

    public subscript(position: Int) -> KafkaMessage {
        KafkaMessage(raw: messages[position]!)
    }
}

// Both point into librdkafka's buffers, which are freed after the handler returns.
@available(*, unavailable)
extension KafkaMessage: Sendable {}

@available(*, unavailable)
extension KafkaMessageBatch: Sendable {}
