import CounterpointCore
import CounterStore
import Kafka
import Logging
import Runtime

/// The realtime layer as a service: a member of the consumer group that counts plays into the
/// realtime store (see `RealtimeProcessor`), on a thread of its own.
///
/// `init` opens the store and checks that a broker answers (within `connectTimeout`), so a bad
/// data directory or an unreachable broker fails before anything runs. `start` joins the group;
/// `stop` leaves it after a final flush and returns once everything is committed.
public final class RealtimeConsumer: JobComponent {
    private let configuration: RealtimeConfiguration
    private let consumer: KafkaConsumer
    private let store: StoreThread
    private let live: Locked<LiveState>
    private let metrics: RealtimeMetrics
    private let logger: Logger
    /// The consumer's thread: `start` joins the group and counts there until `stop` (whose
    /// signal wakes the consumer's poll), or until a failure (see `failure`). `stop` flushes what
    /// was counted, leaves the group and closes the store, and rethrows the failure that ended
    /// the consumer early, if one did. A second start changes nothing.
    public let job: BlockingJob<Void>

    public convenience init(configuration: RealtimeConfiguration, logger: Logger) throws {
        try self.init(configuration: configuration, logger: logger, afterFirstMessage: nil)
    }

    /// `afterFirstMessage`, for tests: where the Kafka consumer's poll may be held (see `KafkaConsumer`).
    package init(configuration: RealtimeConfiguration, logger: Logger, afterFirstMessage: (@Sendable () -> Void)?) throws {
        guard configuration.flushInterval > .zero else {
            throw RealtimeError(message: "the flush interval must be positive")
        }
        self.configuration = configuration
        self.logger = logger
        let live = Locked(LiveState(rejectionSampleCapacity: configuration.rejectionSampleCapacity,
                                    offsetGapCapacity: configuration.offsetGapCapacity, rateWindow: configuration.rateWindow))
        let metrics = RealtimeMetrics()
        self.live = live
        self.metrics = metrics
        let store = try StoreThread(store: configuration.store, forgetting: configuration.earlierBrokerOffsets, logger: logger)
        let consumer: KafkaConsumer
        do {
            consumer = try KafkaConsumer(configuration: configuration.consumerConfiguration, logger: logger, afterFirstMessage: afterFirstMessage)
        } catch {
            store.stop()
            throw error
        }
        self.store = store
        self.consumer = consumer
        job = BlockingJob(name: "rt-consumer") { stop in
            try Self.consume(until: stop, configuration: configuration, consumer: consumer, store: store, live: live,
                             metrics: metrics, logger: logger)
        }
    }

    deinit {
        // A started consumer's thread closes the store when it ends; this one never started.
        if !job.hasStarted { store.stop() }
    }

    /// The error that ended the consumer on its own (a store failure, a fatal Kafka error);
    /// nil while it runs or after a clean stop.
    public var failure: (any Error)? {
        guard case .failure(let error) = ended.finished else { return nil }
        return error
    }

    /// True once the consumer's thread has ended, by `stop` or by a failure.
    public var hasEnded: Bool { ended.finished != nil }

    /// Rates, rejections, gaps and the last flush, for `/v1/status`. Any thread.
    public func status() -> RealtimeStatus {
        let now = ContinuousClock.now
        return live.withLock { $0.snapshot(at: now) }
    }

    /// The consumer's thread: counts until `stop`, flushes, closes the store and reports how it ended.
    private static func consume(until stop: StopSignal, configuration: RealtimeConfiguration, consumer: KafkaConsumer,
                                store: StoreThread, live: Locked<LiveState>, metrics: RealtimeMetrics, logger: Logger) throws {
        logger.info("realtime consumer started", metadata: [
            "kafka.topic": "\(configuration.topic)", "kafka.group": "\(configuration.group)",
            "realtime.flush_interval": "\(configuration.flushInterval)", "store": "\(configuration.store)",
        ])
        let processor = RealtimeProcessor(configuration: configuration, consumer: consumer, store: store, live: live,
                                          metrics: metrics, logger: logger)
        let consumed = Result { try consumer.run(until: stop, handler: processor) }
        let finished = Result { try processor.finish() }
        store.stop()
        let outcome = consumed.flatMap { finished }
        if case .failure(let error) = outcome {
            logger.error("realtime consumer stopped by a failure", metadata: ["error": "\(error)"])
        } else {
            logger.info("realtime consumer stopped", metadata: ["kafka.group": "\(configuration.group)"])
        }
        try outcome.get()
    }
}
