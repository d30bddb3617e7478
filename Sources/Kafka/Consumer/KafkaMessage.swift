import CRdKafka

/// One consumed message, borrowed from librdkafka: it and its `key` and `value` buffers are
/// valid only during the `KafkaConsumerHandler.consume` call that received it. Copy what
/// must outlive the call (`Array(message.value!)`).
public struct KafkaMessage {
    let raw: RDKafkaMessagePointer

    /// Builds the topic name on every access; compare `partition` first where speed matters.
    public var topic: String { String(cString: rd_kafka_topic_name(raw.pointee.rkt)) }
    public var partition: Int32 { raw.pointee.partition }
    public var offset: Int64 { raw.pointee.offset }

    /// nil when the message has no key.
    public var key: UnsafeRawBufferPointer? {
        raw.pointee.key.map { UnsafeRawBufferPointer(start: $0, count: raw.pointee.key_len) }
    }

    /// nil for a tombstone (a message whose value is null), empty for an empty value.
    public var value: UnsafeRawBufferPointer? {
        raw.pointee.payload.map { UnsafeRawBufferPointer(start: $0, count: raw.pointee.len) }
    }

    /// Milliseconds since the epoch, as set by the producer or the broker; nil if unknown.
    public var timestampMilliseconds: Int64? {
        let timestamp = rd_kafka_message_timestamp(raw, nil)
        return timestamp >= 0 ? timestamp : nil
    }
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
