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
public final class RealtimeConsumer: BlockingComponent {
    private enum Lifecycle {
        case ready, running, stopped
    }

    private let configuration: RealtimeConfiguration
    private let consumer: KafkaConsumer
    private let store: StoreThread
    private let live: Locked<LiveState>
    private let metrics = RealtimeMetrics()
    private let logger: Logger
    private let lifecycle = Locked(Lifecycle.ready)
    private let stopRequested = Locked(false)
    /// Completes when the consumer's thread has ended, by `stop` or by a failure.
    public let ended = Completion<Void>()

    public init(configuration: RealtimeConfiguration, logger: Logger) throws {
        guard configuration.flushInterval > .zero else {
            throw RealtimeError(message: "the flush interval must be positive")
        }
        self.configuration = configuration
        self.logger = logger
        live = Locked(LiveState(rejectionSampleCapacity: configuration.rejectionSampleCapacity,
                                offsetGapCapacity: configuration.offsetGapCapacity, rateWindow: configuration.rateWindow))
        store = try StoreThread(store: configuration.store)
        do {
            consumer = try KafkaConsumer(configuration: configuration.consumerConfiguration, logger: logger)
        } catch {
            store.stop()
            throw error
        }
    }

    deinit {
        // Never started (a running consumer's thread keeps it alive until the store is closed).
        store.stop()
    }

    /// Joins the group and counts on a dedicated thread until `stop`, or until a failure
    /// (see `failure`). A consumer starts once.
    public func start() throws {
        try lifecycle.withLock { state in
            guard case .ready = state else { throw RealtimeError.stopped("a realtime consumer starts only once") }
            state = .running
        }
        _ = BlockingThread(name: "rt-consumer") { [self] in runLoop() }
        logger.info("realtime consumer started", metadata: [
            "kafka.topic": "\(configuration.topic)", "kafka.group": "\(configuration.group)",
            "realtime.flush_interval": "\(configuration.flushInterval)", "store": "\(configuration.store)",
        ])
    }

    /// Stops consuming, flushes what was counted, leaves the group and closes the store; returns
    /// when all that is done. Rethrows the failure that ended the consumer early, if one did.
    /// Every call waits for the same end and reports the same outcome.
    public func stop() throws {
        stopRequested.withLock { $0 = true }
        consumer.wakeup()
        let neverStarted = lifecycle.withLock { state -> Bool in
            defer { if state == .ready { state = .stopped } }
            return state == .ready
        }
        if neverStarted {
            store.stop()
            ended.succeed()
        }
        try ended.wait().get()
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

    private func runLoop() {
        let processor = RealtimeProcessor(configuration: configuration, consumer: consumer, store: store, live: live,
                                          metrics: metrics, logger: logger)
        let stopRequested = self.stopRequested
        let consumed = Result { try consumer.run(until: { stopRequested.withLock { $0 } }, handler: processor) }
        let finished = Result { try processor.finish() }
        store.stop()
        let outcome = consumed.flatMap { finished }
        if case .failure(let error) = outcome {
            logger.error("realtime consumer stopped by a failure", metadata: ["error": "\(error)"])
        } else {
            logger.info("realtime consumer stopped", metadata: ["kafka.group": "\(configuration.group)"])
        }
        ended.complete(outcome)
    }
}
