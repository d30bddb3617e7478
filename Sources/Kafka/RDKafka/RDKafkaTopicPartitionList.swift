import CRdKafka

/// Owns an `rd_kafka_topic_partition_list_t` built from Swift values.
final class RDKafkaTopicPartitionList {
    let handle: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    init(capacity: Int = 1) {
        handle = rd_kafka_topic_partition_list_new(Int32(clamping: max(capacity, 1)))
    }

    /// A list of whole topics, for subscribing.
    convenience init(topics: [String]) {
        self.init(capacity: topics.count)
        for topic in topics {
            rd_kafka_topic_partition_list_add(handle, topic, RD_KAFKA_PARTITION_UA)
        }
    }

    /// A list of partitions, each with the offset to start from.
    convenience init(offsets: [(partition: KafkaPartition, offset: Int64)]) {
        self.init(capacity: offsets.count)
        for (partition, offset) in offsets {
            rd_kafka_topic_partition_list_add(handle, partition.topic, partition.id).pointee.offset = offset
        }
    }

    /// A copy of a list librdkafka owns (one an event carries).
    init(copying list: UnsafePointer<rd_kafka_topic_partition_list_t>) {
        handle = rd_kafka_topic_partition_list_copy(list)
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(handle)
    }

    /// The first per-partition error librdkafka recorded in the list, if any.
    func firstError(_ context: (KafkaPartition) -> String) -> KafkaError? {
        let elements = UnsafeBufferPointer(start: handle.pointee.elems, count: Int(handle.pointee.cnt))
        for element in elements where element.err != RD_KAFKA_RESP_ERR_NO_ERROR {
            let partition = KafkaPartition(topic: String(cString: element.topic), id: element.partition)
            return KafkaError(code: element.err, context: context(partition))
        }
        return nil
    }

    /// The partitions of the list with their offsets, as librdkafka filled them in.
    var offsets: [(partition: KafkaPartition, offset: Int64)] {
        UnsafeBufferPointer(start: handle.pointee.elems, count: Int(handle.pointee.cnt)).map {
            (KafkaPartition(topic: String(cString: $0.topic), id: $0.partition), $0.offset)
        }
    }

    /// Reads a list owned by librdkafka (as in the rebalance callback) without taking it over.
    static func partitions(in list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> [KafkaPartition] {
        UnsafeBufferPointer(start: list.pointee.elems, count: Int(list.pointee.cnt)).map {
            KafkaPartition(topic: String(cString: $0.topic), id: $0.partition)
        }
    }
}
