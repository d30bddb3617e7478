import CRdKafka

/// A consumed message or consumer event, owned by the consumer until `RDKafkaClient.destroyMessage`.
typealias RDKafkaMessagePointer = UnsafeMutablePointer<rd_kafka_message_t>

extension UnsafeMutablePointer where Pointee == rd_kafka_message_t {
    /// Consumer events (errors) arrive in the message stream, marked by an error code.
    var isEvent: Bool { pointee.err != RD_KAFKA_RESP_ERR_NO_ERROR }

    var partitionKey: RDKafkaPartitionKey { RDKafkaPartitionKey(topic: pointee.rkt, partition: pointee.partition) }
    var partition: Int32 { pointee.partition }
    var offset: Int64 { pointee.offset }
    var topicName: String { String(cString: rd_kafka_topic_name(pointee.rkt)) }

    var key: UnsafeRawBufferPointer? {
        pointee.key.map { UnsafeRawBufferPointer(start: $0, count: pointee.key_len) }
    }

    var payload: UnsafeRawBufferPointer? {
        pointee.payload.map { UnsafeRawBufferPointer(start: $0, count: pointee.len) }
    }

    var timestampMilliseconds: Int64? {
        let timestamp = rd_kafka_message_timestamp(self, nil)
        return timestamp >= 0 ? timestamp : nil
    }

    /// What a consumer event reports; nil for events that need no attention (end of partition).
    func eventError(context: String) -> KafkaError? {
        let code = pointee.err
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR, code != RD_KAFKA_RESP_ERR__PARTITION_EOF else { return nil }
        var message = String(cString: rd_kafka_err2str(code))
        // librdkafka puts the event's own text, when it has one, where a message's value would be.
        if let text = payload, !text.isEmpty {
            message += ": " + String(decoding: text, as: UTF8.self)
        }
        if pointee.rkt != nil {
            message += " (\(topicName)/\(partition))"
        }
        return KafkaError(code: code, message: message, context: context, isFatal: code == RD_KAFKA_RESP_ERR__FATAL)
    }
}

/// Identifies a partition in the hot path by librdkafka's topic object, to avoid building strings.
struct RDKafkaPartitionKey: Hashable {
    var topic: OpaquePointer
    var partition: Int32

    var topicName: String { String(cString: rd_kafka_topic_name(topic)) }
}
