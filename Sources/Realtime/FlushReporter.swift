import CounterpointCore
import CounterStore
import Kafka
import Logging
import Runtime

/// Where the realtime consumer says what happened: metrics, the live state behind `status()`,
/// its health handle and the log. One method per event, so the processor only decides.
struct FlushReporter {
    let topic: String
    let live: Locked<LiveState>
    let metrics: RealtimeMetrics
    let health: ComponentHealth.Handle?
    let clock: WallClock
    /// Where flushes go: names a full disk as the cause of a failed flush.
    let store: StoreBackend
    let logger: Logger

    /// A flush was taken up: its compaction and duration, whatever its outcome.
    func settled(_ flush: FlushPipeline.Settled) {
        switch flush.compactedRows {
        case .failure(let error):
            logger.warning("compaction of covered hours failed; trying again later", metadata: ["error": "\(error)"])
        case .success(let rows) where rows > 0:
            metrics.compactedRows.increment(by: rows)
        default:
            break
        }
        if case .success = flush.outcome { metrics.flushDuration.record(duration: flush.duration) }
    }

    /// A flush committed; `recovered` when flushes had been failing until now.
    func committed(_ flush: FlushPipeline.Settled, recovered: Bool) {
        metrics.flushRows.record(flush.rows)
        let record = FlushRecord(flushedAt: flush.flushedAt, rows: flush.rows, plays: flush.plays, duration: flush.duration)
        live.withLock {
            $0.status.lastFlush = record
            $0.status.flushFailure = nil
        }
        guard recovered else { return }
        logger.info("realtime flushes commit again", metadata: ["kafka.topic": "\(topic)"])
        health?.update(.running)
    }

    func fenced(_ partitions: [Int32]) {
        metrics.fencedFlushes.increment()
        live.withLock { $0.status.fencedFlushes += 1 }
        logger.warning("flush discarded: another consumer has written these partitions since this one read them; re-reading from the stored offsets", metadata: [
            "kafka.topic": "\(topic)", "kafka.fenced_partitions": "\(partitions.sorted())",
        ])
    }

    /// The store rolled a flush back, the `failures`th in a row: the consumer is degraded.
    func failed(_ error: any Error, failures: Int) {
        metrics.failedFlushes.increment()
        // No delay in it: the reason stays the same while the same failure repeats.
        let reason = "realtime flush failed (\(store.describe(error))); counts since the last commit are re-read from the stored offsets and flushed again when the store accepts them"
        let now = clock.epochMilliseconds()
        live.withLock { $0.status.flushFailure = FlushFailure(reason: reason, failures: failures, since: $0.status.flushFailure?.since ?? now) }
        // With a health board, it logs the change (once per distinct reason).
        if let health {
            health.update(.degraded(reason: reason))
        } else if failures == 1 {
            logger.warning("realtime flush failed; re-reading from the stored offsets and retrying", metadata: [
                "kafka.topic": "\(topic)", "store.error": "\(error)",
            ])
        }
    }

    func offsetGap(_ reset: KafkaOffsetReset) {
        let gap = OffsetGap(reset, detectedAt: clock.epochMilliseconds())
        live.withLock { $0.recordGap(gap) }
        let metadata: Logger.Metadata = [
            "kafka.partition": "\(reset.partition)", "kafka.expected_offset": "\(reset.expectedOffset)",
            "kafka.resumed_offset": "\(reset.resumedOffset)", "kafka.skipped_events": "\(gap.skippedEvents)",
            "kafka.low_watermark": "\(reset.lowWatermark.map(String.init) ?? "unknown")",
        ]
        if gap.wentBack {
            metrics.offsetsWentBack.increment()
            logger.warning("offsets went back: the partition's log ends before the offset the realtime store had reached (the topic was made again, or the broker lost the end of its log); counting goes on from the broker's oldest offset, and events counted before at those offsets, if they are the same, count again until the batch layer covers their hours", metadata: metadata)
        } else {
            metrics.offsetGaps.increment()
            metrics.skippedEvents.increment(by: gap.skippedEvents)
            logger.error("offset gap: the broker no longer has events the realtime store asked for; they are not counted until the batch layer covers their hours", metadata: metadata)
        }
    }

    func storedOffsetsFailed(_ error: any Error) {
        logger.warning("reading the stored offsets of assigned partitions failed; trying again", metadata: [
            "kafka.topic": "\(topic)", "store.error": "\(error)",
        ])
    }

    func assignment(_ partitions: [Int32]) {
        live.withLock { $0.status.assignedPartitions = partitions }
    }
}
