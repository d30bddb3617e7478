import CounterpointCore
import CounterStore
import Kafka
import Logging
import Runtime

/// The realtime layer's consumer handler: counts valid plays per (track, hour) in memory and
/// flushes them with each partition's next offset in one store transaction
/// (docs/architecture.md, the realtime layer).
///
/// - Hot path: each message is parsed in place and added to the `CountTables` (a listener costs
///   a hash and an appended record: the sketches are built on the store thread); the
///   `PartitionLedger` notes offsets once per run of a partition's messages. Nothing is
///   allocated for a valid event.
/// - Flushes go through the `FlushPipeline`: every `flushInterval` (or when a poll finds
///   nothing new) the tables and offsets so far are handed to the store thread while counting
///   goes on into the spare tables; the outcome is taken up at the end of the next batch or
///   idle poll (a caught-up poll returns as soon as the flush ends), and before partitions
///   are assigned or revoked.
/// - A flush that did not commit — fenced (another consumer wrote one of its partitions
///   first) or failed (a full disk: the store rolled it back) — has one recovery: drop every
///   count since the last commit and rewind each partition to what the store holds, so that
///   nothing is lost or doubled. When the store cannot say (it is down), the rewind goes to
///   what this consumer last committed, and the next flush carries those offsets for the store
///   to confirm: a store that came back without some commits (a standby promoted, a crash
///   with asynchronous commit) fences it, and the partitions are read again from what it
///   holds, new traffic or not. A failed flush also waits a growing delay before the next one,
///   reporting itself degraded until one commits.
///
/// Only the consumer's polling thread calls it.
final class RealtimeProcessor: KafkaConsumerHandler {
    private let consumer: KafkaConsumer
    private let store: StoreThread
    private let topic: String
    private let flushInterval: Duration
    private let live: Locked<LiveState>
    private let metrics: RealtimeMetrics
    private let report: FlushReporter

    private var tables = CountTables()
    private var rejections: RejectionLog
    private var ledger: PartitionLedger
    private var flushes: FlushPipeline
    private var lastHandOff = ContinuousClock.now
    private var flushBackoff: Backoff
    /// Since the last commit: the failure of the latest flush, and when to try the next one.
    private var failing: (error: any Error, retryAt: ContinuousClock.Instant)?

    init(configuration: RealtimeConfiguration, consumer: KafkaConsumer, store: StoreThread, live: Locked<LiveState>,
         metrics: RealtimeMetrics, logger: Logger) {
        self.consumer = consumer
        self.store = store
        self.topic = configuration.topic
        self.flushInterval = configuration.flushInterval
        self.live = live
        self.metrics = metrics
        report = FlushReporter(topic: configuration.topic, live: live, metrics: metrics, health: configuration.health,
                               clock: configuration.clock, store: configuration.store, logger: logger)
        self.rejections = live.withLock { $0.status.rejections }
        flushBackoff = Backoff(initial: configuration.flushRetryDelay, maximum: configuration.flushRetryMaximumDelay)
        ledger = PartitionLedger(retryBackoff: flushBackoff)
        flushes = FlushPipeline(store: store, topic: configuration.topic, clock: configuration.clock, wake: { consumer.wakeup() })
    }

    // MARK: KafkaConsumerHandler

    func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
        try settle(waiting: true, mayReseek: false)
        let ids = partitions.filter { $0.topic == topic }.map(\.id)
        // One try: while the store fails, the partitions wait (see `PartitionLedger`) and the
        // read is retried from `idle` and `consume`, never by sleeping in this callback.
        let stored = try? readStoredOffsets().get()
        let starts = ledger.assign(ids, stored: stored, now: .now)
        report.assignment(ledger.assigned)
        return Dictionary(uniqueKeysWithValues: starts.map { (KafkaPartition(topic: topic, id: $0.key), $0.value) })
    }

    func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws {
        // The last chance to save their progress: another member may read them next.
        try settle(waiting: true, mayReseek: false)
        handOff(force: false)
        try settle(waiting: true, mayReseek: false)
        ledger.revoke(partitions.filter { $0.topic == topic }.map(\.id))
        report.assignment(ledger.assigned)
    }

    func consume(_ batch: KafkaMessageBatch) throws {
        flushes.isCaughtUp = false
        var currentPartition = -1
        var counting = true
        var lastOffset: Int64 = 0
        var valid = 0
        let rejectedBefore = rejections.total
        var playDimensions = PlayDimensions()
        for message in batch {
            let partition = Int(message.partition)
            let offset = message.offset
            if partition != currentPartition {
                if currentPartition >= 0 && counting { ledger.consumed(currentPartition, upTo: lastOffset + 1) }
                currentPartition = partition
                counting = ledger.begin(partition, at: offset)
            }
            guard counting else { continue }
            lastOffset = offset
            guard let value = message.value else {
                reject(EventRejection(reason: .empty, message: "the message value is null (a tombstone)"),
                       partition: partition, offset: offset, value: UnsafeRawBufferPointer(start: nil, count: 0))
                continue
            }
            switch EventParser.parse(value, dimensions: &playDimensions) {
            case .success(let event):
                tables.events.add(trackID: event.trackID, creatorID: event.creatorID, hour: event.hour, type: event.type, playDimensions)
                valid += 1
            case .failure(let rejection):
                reject(rejection, partition: partition, offset: offset, value: value)
            }
        }
        if currentPartition >= 0 && counting { ledger.consumed(currentPartition, upTo: lastOffset + 1) }

        metrics.ingested.increment(by: Int64(valid))
        let now = ContinuousClock.now
        let snapshot = rejections.total > rejectedBefore ? rejections : nil
        live.withLock { state in
            state.recordConsumed(batch.count, at: now)
            if let snapshot { state.status.rejections = snapshot }
        }
        try flushIfDue(now: now)
    }

    /// A poll waited in vain: the consumer has caught up, so what it holds is flushed now rather
    /// than at the end of the interval (the end of a burst becomes visible sooner; under steady
    /// traffic polls are never idle and the interval rules).
    func idle() throws {
        // Caught up: the next poll waits for a message or for the end of the flush in flight,
        // whichever comes first, so that the next flush — the one that makes the end of a burst
        // visible — starts the moment this one ends, and a message that comes meanwhile is not
        // held up by it (docs/performance.md, realtime ingest).
        flushes.isCaughtUp = true
        try settle(waiting: false, mayReseek: true)
        if flushes.isIdle, ledger.hasUnflushedProgress, failing == nil {
            handOff(force: false)
        } else {
            try flushIfDue(now: .now)
        }
    }

    func offsetReset(_ reset: KafkaOffsetReset) throws {
        report.offsetGap(reset)
    }

    /// Waits for the flush in flight, if any (after `run` returned, before the store closes).
    /// Throws when the last flush failed: nothing is lost (a restart re-reads from the stored
    /// offsets), but the stop was not clean.
    func finish() throws {
        try settle(waiting: true, mayReseek: false)
        if let failing { throw failing.error }
    }

    // MARK: Flushing

    private func flushIfDue(now: ContinuousClock.Instant) throws {
        try settle(waiting: false, mayReseek: true)
        if ledger.storedOffsetsDue(at: now) { try retryStoredOffsets(now: now) }
        guard flushes.isIdle, now - lastHandOff >= flushInterval else { return }
        if let failing, now < failing.retryAt { return }
        handOff(force: true)
    }

    /// Starts a flush of everything consumed since the last one. With nothing consumed it still
    /// records the flush time when `force`d and partitions are assigned, so that freshness shows
    /// a consumer that is caught up rather than one that stopped.
    private func handOff(force: Bool) {
        let (topic, consumer) = (topic, consumer)
        let (progress, lag, anyAssigned) = ledger.progress(topic: topic) { consumer.watermarks(topic: topic, partition: $0)?.high }
        lastHandOff = .now
        if anyAssigned { metrics.lag.record(lag) }
        guard !progress.isEmpty || (force && anyAssigned) else { return }
        flushes.start(&tables, progress: progress, now: lastHandOff)
    }

    /// Takes up the outcome of the flush in flight, if it has one (or waits for it).
    /// `mayReseek`: seeking is possible and needed (not while partitions are being assigned or
    /// revoked).
    private func settle(waiting: Bool, mayReseek: Bool) throws {
        guard let flush = flushes.settle(waiting: waiting) else { return }
        report.settled(flush)
        switch flush.outcome {
        case .success(.committed):
            ledger.committed(flush.progress)
            report.committed(flush, recovered: failing != nil)
            if failing != nil {
                failing = nil
                flushBackoff.succeeded()
            }
            return
        case .success(.fenced(let partitions)):
            report.fenced(partitions)
        case .failure(let error):
            // The next flush waits a growing delay; the consumer is degraded until one commits.
            failing = (error, .now + flushBackoff.failed())
            report.failed(error, failures: flushBackoff.failures)
        }
        // The one recovery: nothing counted since the last commit stays; read it again.
        tables.removeAll()
        for seek in ledger.rewind(to: flush.storedOffsets) where mayReseek {
            try consumer.seek(partition: KafkaPartition(topic: topic, id: seek.partition), to: seek.offset)
        }
    }

    // MARK: Stored offsets

    /// The store's offsets for the topic; a failure is logged.
    private func readStoredOffsets() -> Result<[Int32: Int64], any Error> {
        let topic = self.topic
        let stored = Result { try store.run { try $0.storedOffsets(topic: topic) } }
        if case .failure(let error) = stored { report.storedOffsetsFailed(error) }
        return stored
    }

    /// Partitions wait for their stored offsets: asks again, and seeks them there once the store
    /// answers. Past about `flushRetryMaximumDelay` of failures the error stops the consumer,
    /// as a store that stays down should.
    private func retryStoredOffsets(now: ContinuousClock.Instant) throws {
        let stored: [Int32: Int64]
        switch readStoredOffsets() {
        case .success(let offsets):
            stored = offsets
        case .failure(let error):
            guard ledger.storedOffsetsFailed(at: now) != nil else { throw error }
            return
        }
        for seek in ledger.resolveStoredOffsets(stored) {
            try consumer.seek(partition: KafkaPartition(topic: topic, id: seek.partition), to: seek.offset)
        }
    }

    // MARK: Helpers

    private func reject(_ rejection: EventRejection, partition: Int, offset: Int64, value: UnsafeRawBufferPointer) {
        metrics.rejected[rejection.reason]?.increment()
        rejections.record(rejection, source: "\(topic)/\(partition)@\(offset)", payload: value)
    }
}
