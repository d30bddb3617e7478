import Logging
import Runtime

/// Produces messages to Kafka without blocking, applying backpressure instead of dropping.
///
/// Delivery reports are served by a dedicated thread, so `deliveryStatistics` stays current
/// and latencies are measured when the broker answers, not when someone polls. An unreachable
/// broker fails `init` within `connectTimeout`; after that, librdkafka retries until a
/// message's `messageTimeoutMilliseconds` passes and counts it as failed.
public final class KafkaProducer: Sendable {
    private let client: RDKafkaClient
    private let topics = Locked<[String: RDKafkaTopic]>([:])
    private let statistics: Locked<DeliveryStatistics>
    /// Apart from `statistics`, so that `send` does not contend with delivery reports.
    private let enqueued = Locked(0)
    private let pollerStop = StopSignal()
    private let poller: BlockingThread
    private let logger: Logger

    public init(configuration: KafkaProducerConfiguration, logger: Logger) throws(KafkaError) {
        let purpose = "creating producer for \(configuration.bootstrapServers)"
        let statistics = Locked(DeliveryStatistics())
        let context = RDKafkaClientContext(logger: logger, deliveries: statistics, healthReport: configuration.healthReport,
                                           cluster: configuration.embeddedCluster)
        let client = try RDKafkaClient(kind: .producer, properties: configuration.librdkafkaProperties, context: context, purpose: purpose)
        if let timeout = configuration.connectTimeout {
            try client.verifyBrokerReachable(within: timeout, servers: configuration.bootstrapServers, purpose: purpose)
        }
        let stop = pollerStop
        stop.onRequest { client.interruptPoll() }
        self.client = client
        self.statistics = statistics
        self.logger = logger
        self.poller = BlockingThread(name: "rdk-producer") {
            while !stop.isRequested {
                client.poll(timeout: .milliseconds(100))
            }
        }
    }

    deinit {
        pollerStop.request()
        poller.join()
        let undelivered = client.outboundQueueLength
        if undelivered > 0 {
            logger.warning("producer closed with messages not yet delivered; call flush first", metadata: ["kafka.undelivered": "\(undelivered)"])
        }
    }

    /// Enqueues one message and returns without waiting for delivery. When librdkafka's queue
    /// is full, serves delivery reports until there is room: it slows the caller down rather
    /// than dropping. `value: nil` produces a tombstone; `timestampMilliseconds: nil` means now.
    /// Returns false, with the message not enqueued, when `stop` is raised while it waits for room
    /// (with the broker gone, that wait lasts until queued messages time out, minutes by default).
    @discardableResult
    public func send(topic: String, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?,
                     timestampMilliseconds: Int64? = nil, unless stop: StopSignal? = nil) throws(KafkaError) -> Bool {
        let handle = try topicHandle(topic)
        // Counted before producing: the delivery report may be counted before produce returns.
        enqueued.withLock { $0 += 1 }
        var produced = false
        // Uncounted again when the message never went in: librdkafka refused it, or a stop came first.
        defer { if !produced { enqueued.withLock { $0 -= 1 } } }
        while try !client.produce(to: handle, key: key, value: value, timestampMilliseconds: timestampMilliseconds ?? 0) {
            if stop?.isRequested == true { return false }
            // Backpressure: wait for delivery reports to make room.
            client.poll(timeout: .milliseconds(10))
        }
        produced = true
        return true
    }

    @discardableResult
    public func send(topic: String, key: [UInt8]?, value: [UInt8]?, timestampMilliseconds: Int64? = nil,
                     unless stop: StopSignal? = nil) throws(KafkaError) -> Bool {
        try withOptionalBytes(key) { (key) throws(KafkaError) in
            try withOptionalBytes(value) { (value) throws(KafkaError) in
                try send(topic: topic, key: key, value: value, timestampMilliseconds: timestampMilliseconds, unless: stop)
            }
        }
    }

    /// Waits until every message sent so far is delivered or has failed (see `deliveryStatistics`).
    public func flush(timeout: Duration) throws(KafkaError) {
        try client.flush(timeout: timeout)
    }

    public var deliveryStatistics: DeliveryStatistics {
        var snapshot = statistics.withLock { $0 }
        // Read after the reports, so `inFlight` is never negative.
        snapshot.enqueued = enqueued.withLock { $0 }
        return snapshot
    }

    private func topicHandle(_ name: String) throws(KafkaError) -> RDKafkaTopic {
        try topics.withLock { (topics) throws(KafkaError) in
            if let existing = topics[name] { return existing }
            let created = try RDKafkaTopic(name: name, client: client)
            topics[name] = created
            return created
        }
    }
}

private func withOptionalBytes<Result>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) throws(KafkaError) -> Result) throws(KafkaError) -> Result {
    guard let bytes else { return try body(nil) }
    // Array.withUnsafeBytes only rethrows untyped errors, so carry the typed one out by hand.
    let outcome = bytes.withUnsafeBytes { buffer in
        Swift.Result { () throws(KafkaError) in try body(buffer) }
    }
    return try outcome.get()
}
