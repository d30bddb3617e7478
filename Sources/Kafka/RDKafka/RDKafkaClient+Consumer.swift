import CRdKafka

/// Owns an `rd_kafka_queue_t`; here always the consumer group's queue.
final class RDKafkaQueue: @unchecked Sendable {
    // Safe to share: librdkafka queues are thread-safe; `yield` is meant to be called from
    // another thread than the one polling.
    let handle: OpaquePointer
    /// Queue handles must be destroyed before their client, so each keeps its client alive.
    private let client: RDKafkaClient

    init(consumerQueueOf client: RDKafkaClient) {
        handle = rd_kafka_queue_get_consumer(client.handle)
        self.client = client
    }

    deinit {
        rd_kafka_queue_destroy(handle)
    }

    /// Makes a blocked poll on this queue return now.
    func yield() {
        rd_kafka_queue_yield(handle)
    }
}

extension RDKafkaClient {
    /// Sends the client's events (errors, rebalances) to the consumer queue, so one poll serves all.
    func routeEventsToConsumerQueue(purpose: String) throws(KafkaError) {
        try RDKafkaStatus.check(rd_kafka_poll_set_consumer(handle), purpose)
    }

    func subscribe(to topics: [String]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(topics: topics)
        try RDKafkaStatus.check(rd_kafka_subscribe(handle, list.handle), "subscribing to \(topics.joined(separator: ", "))")
    }

    /// Waits up to `timeout` for one message or event; nil on timeout or after `RDKafkaQueue.yield`.
    func consumerPoll(timeout: Duration) -> RDKafkaMessagePointer? {
        rd_kafka_consumer_poll(handle, timeout.clampedMilliseconds)
    }

    /// Takes what is already queued, without waiting, into `buffer`; returns how many.
    func drain(_ queue: RDKafkaQueue, into buffer: UnsafeMutableBufferPointer<RDKafkaMessagePointer?>) -> Int {
        guard buffer.count > 0 else { return 0 }
        return max(0, rd_kafka_consume_batch_queue(queue.handle, 0, buffer.baseAddress, buffer.count))
    }

    func destroyMessage(_ message: RDKafkaMessagePointer) {
        rd_kafka_message_destroy(message)
    }

    /// Replaces the whole assignment (the eager protocol); an empty list clears it.
    func assign(_ offsets: [(partition: KafkaPartition, offset: Int64)]) throws(KafkaError) {
        let code: rd_kafka_resp_err_t
        if offsets.isEmpty {
            code = rd_kafka_assign(handle, nil)
        } else {
            let list = RDKafkaTopicPartitionList(offsets: offsets)
            code = rd_kafka_assign(handle, list.handle)
        }
        try RDKafkaStatus.check(code, offsets.isEmpty ? "clearing the assignment" : "assigning \(offsets.map(\.partition))")
    }

    func seek(_ partition: KafkaPartition, to offset: Int64, timeout: Duration) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(offsets: [(partition, offset)])
        let context = "seeking \(partition) to offset \(offset)"
        let wait = Self.seekTimeoutArgument(timeout, libraryVersion: Self.libraryVersion)
        try RDKafkaStatus.check(rd_kafka_seek_partitions(handle, list.handle, wait), context)
        if let error = list.firstError({ _ in context }) { throw error }
    }

    /// The linked librdkafka's version, `0xMMmmrrxx` (`rd_kafka_version()`).
    static var libraryVersion: Int32 { rd_kafka_version() }

    /// What to pass `rd_kafka_seek_partitions` for `timeout`. Before 2.1.0 librdkafka waited
    /// that many microseconds, not milliseconds (confluentinc/librdkafka#4230; Debian 12 has
    /// 2.0.2): a 10 s wait became 10 ms, and a seek its broker thread took up a little late on
    /// a loaded machine failed with "Timed out" and stopped the consumer. Scaled for those.
    static func seekTimeoutArgument(_ timeout: Duration, libraryVersion: Int32) -> Int32 {
        let milliseconds = timeout.clampedMilliseconds
        guard libraryVersion < 0x0201_0000 else { return milliseconds }
        return Int32(clamping: Int64(milliseconds) * 1_000)
    }

    /// Commits the next offset of each partition to the group and waits up to `timeout` for the
    /// broker's answer. No answer in time throws a retriable `_TIMED_OUT`; the commit may still
    /// land later. (`rd_kafka_commit` itself waits for as long as the coordinator cannot be
    /// reached — a minute and more while the cluster is down — and blocks the poll loop.)
    func commit(_ offsets: [(partition: KafkaPartition, offset: Int64)], timeout: Duration) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(offsets: offsets)
        let context = "committing offsets \(offsets.map { "\($0.partition)@\($0.offset)" })"
        // The answer comes on a queue of this call's own; destroying it unanswered is safe (a
        // late answer is then dropped by librdkafka).
        let queue = rd_kafka_queue_new(handle)
        defer { rd_kafka_queue_destroy(queue) }
        try RDKafkaStatus.check(rd_kafka_commit_queue(handle, list.handle, queue, nil, nil), context)
        guard let event = rd_kafka_queue_poll(queue, timeout.clampedMilliseconds) else {
            throw KafkaError(code: RD_KAFKA_RESP_ERR__TIMED_OUT,
                             message: "no answer from the group coordinator within \(timeout) (the commit may still land)",
                             context: context, isRetriable: true)
        }
        defer { rd_kafka_event_destroy(event) }
        try RDKafkaStatus.check(rd_kafka_event_error(event), context)
        if let answered = rd_kafka_event_topic_partition_list(event),
           let error = RDKafkaTopicPartitionList(copying: answered).firstError({ "committing the offset of \($0)" }) {
            throw error
        }
    }

    /// The group's committed offsets, asked of the group coordinator; `RDKafkaOffset.invalid`
    /// where a partition has none.
    func committed(_ partitions: [KafkaPartition], timeout: Duration) throws(KafkaError) -> [(partition: KafkaPartition, offset: Int64)] {
        let list = RDKafkaTopicPartitionList(offsets: partitions.map { ($0, RDKafkaOffset.invalid) })
        let context = "fetching the committed offsets of \(partitions)"
        try RDKafkaStatus.check(rd_kafka_committed(handle, list.handle, timeout.clampedMilliseconds), context)
        if let error = list.firstError({ "fetching the committed offset of \($0)" }) { throw error }
        return list.offsets
    }

    /// Leaves the group; librdkafka calls the rebalance callback (revoke) from inside this call.
    func closeConsumer() throws(KafkaError) {
        try RDKafkaStatus.check(rd_kafka_consumer_close(handle), "closing consumer")
    }

    /// The offsets librdkafka last saw in fetch responses; no request is made.
    func cachedWatermarks(_ partition: KafkaPartition) -> (low: Int64, high: Int64)? {
        var low = Int64(RD_KAFKA_OFFSET_INVALID)
        var high = Int64(RD_KAFKA_OFFSET_INVALID)
        guard rd_kafka_get_watermark_offsets(handle, partition.topic, partition.id, &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR else {
            return nil
        }
        return (low, high)
    }

    /// Asks the partition leader for its watermarks, blocking up to `timeout`.
    func queryWatermarks(_ partition: KafkaPartition, timeout: Duration) throws(KafkaError) -> (low: Int64, high: Int64) {
        var low: Int64 = 0
        var high: Int64 = 0
        try RDKafkaStatus.check(
            rd_kafka_query_watermark_offsets(handle, partition.topic, partition.id, &low, &high, timeout.clampedMilliseconds),
            "querying watermarks of \(partition)")
        return (low, high)
    }
}

/// librdkafka's logical start offsets.
enum RDKafkaOffset {
    static let beginning = Int64(RD_KAFKA_OFFSET_BEGINNING)
    static let end = Int64(RD_KAFKA_OFFSET_END)
    static let invalid = Int64(RD_KAFKA_OFFSET_INVALID)
}
