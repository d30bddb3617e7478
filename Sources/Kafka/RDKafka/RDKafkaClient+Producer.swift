import CRdKafka

/// Owns an `rd_kafka_topic_t`, the producer's handle for one topic.
final class RDKafkaTopic: @unchecked Sendable {
    // Safe to share: librdkafka's topic handles are reference counted and thread-safe.
    let handle: OpaquePointer
    let name: String
    /// Topic handles must be destroyed before their client, so each keeps its client alive.
    private let client: RDKafkaClient

    init(name: String, client: RDKafkaClient) throws(KafkaError) {
        guard let handle = rd_kafka_topic_new(client.handle, name, nil) else {
            throw KafkaError(code: rd_kafka_last_error(), context: "opening topic \(name)")
        }
        self.handle = handle
        self.name = name
        self.client = client
    }

    deinit {
        rd_kafka_topic_destroy(handle)
    }
}

extension RDKafkaClient {
    /// Enqueues one message; librdkafka copies key and value before this returns. Returns false
    /// when the queue is full (`queue.buffering.max.messages`/`kbytes`) and nothing was enqueued.
    func produce(to topic: RDKafkaTopic, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?, timestampMilliseconds: Int64) throws(KafkaError) -> Bool {
        let code = counterpoint_rd_kafka_produce(
            handle, topic.handle,
            key?.baseAddress ?? (key == nil ? nil : emptyPayload), key?.count ?? 0,
            value?.baseAddress ?? (value == nil ? nil : emptyPayload), value?.count ?? 0,
            timestampMilliseconds)
        if code == RD_KAFKA_RESP_ERR__QUEUE_FULL { return false }
        try RDKafkaStatus.check(code, "producing to \(topic.name)")
        return true
    }

    /// Serves delivery reports and error events, waiting up to `timeout` for the first.
    func poll(timeout: Duration) {
        rd_kafka_poll(handle, timeout.clampedMilliseconds)
    }

    /// Makes a blocked `poll` return now.
    func interruptPoll() {
        rd_kafka_yield(handle)
    }

    /// Serves delivery reports until every message is acknowledged or failed, or `timeout` passes.
    func flush(timeout: Duration) throws(KafkaError) {
        let code = rd_kafka_flush(handle, timeout.clampedMilliseconds)
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return }
        throw KafkaError(
            code: code,
            message: "\(outboundQueueLength) messages or requests still unacknowledged after \(timeout)",
            context: "flushing producer")
    }

    /// Messages and requests not yet acknowledged or reported.
    var outboundQueueLength: Int {
        Int(rd_kafka_outq_len(handle))
    }
}

/// A non-NULL pointer for empty keys and values: NULL would mean "no key" or a tombstone.
/// Safe to share: nothing ever reads or writes through it, since its length is always zero.
nonisolated(unsafe) private let emptyPayload = UnsafeRawPointer(UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1))
