import CounterpointCore
import Foundation
import CounterStore
import Kafka
import Logging
import Runtime

/// The realtime layer's consumer handler: counts valid plays per (track, hour) in memory and
/// flushes them with each partition's next offset in one store transaction (SPEC §3).
///
/// - Hot path: each message is parsed in place and added to one `PlayCounts`; offsets are
///   noted once per run of a partition's messages. Nothing is allocated for a valid event.
/// - Flushes run on the `StoreThread`: when `flushInterval` has passed, the counts and offsets
///   so far are handed over and counting goes on into a second (recycled) table. At most one
///   flush is in flight; its outcome is taken up at the end of the next batch or idle poll.
/// - Fencing: every flush carries, per partition, the offset it started from. When the store
///   says another consumer wrote one of them first, ALL counts since the last commit are
///   dropped (one table for all partitions keeps the hot path cheap; fencing only happens
///   around rebalances) and every assigned partition is sought back to its stored offset.
/// - Before partitions are revoked (rebalance or close) everything is flushed and waited for.
/// - A failed flush (a full disk, an I/O error) rolled back: the store still holds the counts and
///   offsets of the last commit. Like a fence, it drops the counts since then and re-reads the
///   partitions from the stored offsets — nothing lost, nothing doubled — then tries again after
///   `flushRetryDelay` (doubling), reporting itself degraded until a flush commits.
///
/// Only the consumer's polling thread calls it.
final class RealtimeProcessor: KafkaConsumerHandler {
    private let consumer: KafkaConsumer
    private let store: StoreThread
    private let topic: String
    private let flushInterval: Duration
    private let live: Locked<LiveState>
    private let metrics: RealtimeMetrics
    private let logger: Logger

    private var counts = PlayCounts(minimumCapacity: 1 << 16)
    /// The table of the last flush, emptied by the store thread, for the next swap.
    private var spareCounts: PlayCounts?
    /// The same plays by waveform bucket, client and country, flushed with `counts`.
    private var dimensions = DimensionCounts(minimumCapacity: 1 << 16)
    private var spareDimensions: DimensionCounts?
    private var rejections: RejectionLog
    /// Indexed by partition id.
    private var positions: [PartitionPosition] = []
    private var inFlight: FlushInFlight?
    private var lastHandOff = ContinuousClock.now
    /// When a flush last looked for covered hours to compact (see `compactionDue`).
    private var lastCompaction = ContinuousClock.now - RealtimeProcessor.compactionInterval
    /// True while the previous compaction left covered rows behind (it stopped at its row budget).
    private var compactionBacklog = false

    /// How often flushes look for realtime rows of hours the batch layer has covered: well
    /// within SPEC §3's minute.
    static let compactionInterval: Duration = .seconds(10)
    /// Rows one compaction transaction deletes at most, so that it delays the flush after it by
    /// milliseconds, not seconds.
    static let compactionRowsPerFlush = 20_000
    private let retryDelay: Duration
    private let retryMaximumDelay: Duration
    private let health: ComponentHealth?
    private let componentName: String
    /// Since the last commit: the failure of the latest flush, and when to try the next one.
    private var failing: (error: any Error, failures: Int, retryAt: ContinuousClock.Instant)?

    init(configuration: RealtimeConfiguration, consumer: KafkaConsumer, store: StoreThread, live: Locked<LiveState>,
         metrics: RealtimeMetrics, logger: Logger) {
        self.consumer = consumer
        self.store = store
        self.topic = configuration.topic
        self.flushInterval = configuration.flushInterval
        self.live = live
        self.metrics = metrics
        self.logger = logger
        self.rejections = live.withLock { $0.rejections }
        self.retryDelay = configuration.flushRetryDelay
        self.retryMaximumDelay = configuration.flushRetryMaximumDelay
        self.health = configuration.health
        self.componentName = configuration.componentName
    }

    // MARK: KafkaConsumerHandler

    func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
        try settleFlush(waiting: true, mayReseek: false)
        let stored = try storedOffsetsRetrying()
        var starts: [KafkaPartition: Int64] = [:]
        for partition in partitions where partition.topic == topic {
            let id = Int(partition.id)
            if id >= positions.count {
                positions.append(contentsOf: repeatElement(PartitionPosition(), count: id + 1 - positions.count))
            }
            positions[id] = PartitionPosition(isAssigned: true, stored: stored[partition.id])
            starts[partition] = stored[partition.id]
        }
        publishAssignment()
        return starts
    }

    func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws {
        // The last chance to save their progress: another member may read them next.
        try settleFlush(waiting: true, mayReseek: false)
        handOff(force: false)
        try settleFlush(waiting: true, mayReseek: false)
        for partition in partitions where partition.topic == topic && Int(partition.id) < positions.count {
            positions[Int(partition.id)] = PartitionPosition()
        }
        publishAssignment()
    }

    func consume(_ batch: KafkaMessageBatch) throws {
        var currentPartition = -1
        var lastOffset: Int64 = 0
        var valid = 0
        let rejectedBefore = rejections.total
        var playDimensions = PlayDimensions()
        for message in batch {
            let partition = Int(message.partition)
            let offset = message.offset
            if partition != currentPartition {
                if currentPartition >= 0 { positions[currentPartition].consumed = lastOffset + 1 }
                currentPartition = partition
                notePosition(partition, firstOffset: offset)
            }
            lastOffset = offset
            guard let value = message.value else {
                reject(EventRejection(reason: .empty, message: "the message value is null (a tombstone)"),
                       partition: partition, offset: offset, value: UnsafeRawBufferPointer(start: nil, count: 0))
                continue
            }
            switch EventParser.parse(value, dimensions: &playDimensions) {
            case .success(let event):
                counts.add(trackID: event.trackID, hour: event.hour)
                dimensions.add(trackID: event.trackID, hour: event.hour, playDimensions)
                valid += 1
            case .failure(let rejection):
                reject(rejection, partition: partition, offset: offset, value: value)
            }
        }
        if currentPartition >= 0 { positions[currentPartition].consumed = lastOffset + 1 }

        metrics.ingested.increment(by: Int64(valid))
        let now = ContinuousClock.now
        let rejectedNow = rejections.total > rejectedBefore
        let snapshot = rejectedNow ? rejections : nil
        live.withLock { state in
            state.recordConsumed(batch.count, at: now)
            if let snapshot { state.rejections = snapshot }
        }
        try flushIfDue(now: now)
    }

    /// A poll waited `pollTimeout` in vain: the consumer has caught up, so what it holds is
    /// flushed now rather than at the end of the interval (the end of a burst becomes visible
    /// sooner; under steady traffic polls are never idle and the interval rules).
    func idle() throws {
        try settleFlush(waiting: false, mayReseek: true)
        if inFlight == nil, hasUnflushedProgress, failing == nil {
            handOff(force: false)
        } else {
            try flushIfDue(now: .now)
        }
    }

    func offsetReset(_ reset: KafkaOffsetReset) throws {
        let gap = OffsetGap(topic: reset.partition.topic, partition: reset.partition.id, expectedOffset: reset.expectedOffset,
                            resumedOffset: reset.resumedOffset, skippedEvents: reset.skippedMessages,
                            detectedAt: WallClock.epochMilliseconds())
        metrics.offsetGaps.increment()
        metrics.skippedEvents.increment(by: max(0, reset.skippedMessages))
        live.withLock { $0.recordGap(gap) }
        logger.error("offset gap: the broker no longer has events the realtime store asked for; they are not counted until the batch layer covers their hours", metadata: [
            "kafka.partition": "\(reset.partition)", "kafka.expected_offset": "\(reset.expectedOffset)",
            "kafka.resumed_offset": "\(reset.resumedOffset)", "kafka.skipped_events": "\(reset.skippedMessages)",
            "kafka.low_watermark": "\(reset.lowWatermark.map(String.init) ?? "unknown")",
        ])
    }

    /// Waits for the flush in flight, if any (after `run` returned, before the store closes).
    /// Throws when the last flush failed: nothing is lost (a restart re-reads from the stored
    /// offsets), but the stop was not clean.
    func finish() throws {
        try settleFlush(waiting: true, mayReseek: false)
        if let failing { throw failing.error }
    }

    // MARK: Flushing

    private func flushIfDue(now: ContinuousClock.Instant) throws {
        try settleFlush(waiting: false, mayReseek: true)
        guard inFlight == nil, now - lastHandOff >= flushInterval else { return }
        if let failing, now < failing.retryAt { return }
        handOff(force: true)
    }

    /// Starts a flush of everything consumed since the last one. With nothing consumed it still
    /// records the flush time when `force`d and partitions are assigned, so that freshness shows
    /// a consumer that is caught up rather than one that stopped.
    private func handOff(force: Bool) {
        precondition(inFlight == nil, "one flush at a time")
        var progress: [PartitionProgress] = []
        var lag: Int64 = 0
        var anyAssigned = false
        for id in positions.indices where positions[id].isAssigned {
            anyAssigned = true
            let position = positions[id]
            let highWatermark = consumer.watermarks(topic: topic, partition: Int32(id))?.high
            if let highWatermark, let next = position.consumed ?? position.stored {
                lag += max(0, highWatermark - next)
            }
            guard let consumed = position.consumed, consumed != position.stored else { continue }
            progress.append(PartitionProgress(topic: topic, partition: Int32(id), startOffset: position.stored,
                                              nextOffset: consumed, highWatermark: highWatermark))
        }
        lastHandOff = .now
        if anyAssigned { metrics.lag.record(lag) }
        guard !progress.isEmpty || (force && anyAssigned) else { return }

        let table = CountsHandOff(counts, dimensions)
        counts = spareCounts ?? PlayCounts(minimumCapacity: 1 << 16)
        spareCounts = nil
        dimensions = spareDimensions ?? DimensionCounts(minimumCapacity: 1 << 16)
        spareDimensions = nil
        let flushedAt = WallClock.epochMilliseconds()
        let topic = self.topic
        let flushed = progress
        let compact = compactionBacklog || lastHandOff - lastCompaction >= Self.compactionInterval
        if compact { lastCompaction = lastHandOff }
        let maxCompactedRows = Self.compactionRowsPerFlush
        let ticket = store.start { store in
            let started = ContinuousClock.now
            let rows = table.counts.sortedElements()
            let outcome = try store.apply(
                increments: rows, dimensions: table.dimensions.rows(),
                progress: flushed, flushedAt: flushedAt)
            let duration = ContinuousClock.now - started
            let storedNow = outcome == .committed ? [:] : try store.storedOffsets(topic: topic)
            // Compaction runs after the flush's commit, in its own transaction: the flush is
            // never held back by it, and a failed compaction (a full disk, say) is reported
            // apart, so it can never pass for a failed flush whose counts would be retried.
            let compacted = compact ? Result { try store.compactCoveredHours(maxRows: maxCompactedRows) } : .success(0)
            let plays = table.counts.totalPlays
            table.counts.removeAll()
            table.dimensions.removeAll()
            return FlushReport(outcome: outcome, rows: rows.count, plays: plays, duration: duration,
                               flushedAt: flushedAt, storedOffsets: storedNow, emptied: table, compactedRows: compacted)
        }
        inFlight = FlushInFlight(progress: progress, ticket: ticket)
    }

    /// Takes up the outcome of the flush in flight, if it has one (or waits for it).
    /// `mayReseek`: seeking is possible and needed (not while partitions are being assigned or revoked).
    private func settleFlush(waiting: Bool, mayReseek: Bool) throws {
        guard let flight = inFlight else { return }
        guard let result = waiting ? flight.ticket.wait() : flight.ticket.finished else { return }
        inFlight = nil
        let report: FlushReport
        switch result {
        case .success(let succeeded):
            report = succeeded
        case .failure(let error):
            try recoverFromFailedFlush(error, mayReseek: mayReseek)
            return
        }
        spareCounts = report.emptied.counts
        spareDimensions = report.emptied.dimensions
        switch report.compactedRows {
        case .success(let rows):
            compactionBacklog = rows >= Self.compactionRowsPerFlush
            if rows > 0 { metrics.compactedRows.increment(by: rows) }
        case .failure(let error):
            // Covered rows are never read, so they only cost space; the next interval tries again.
            compactionBacklog = false
            logger.warning("compaction of covered hours failed; trying again later", metadata: ["error": "\(error)"])
        }
        metrics.flushDuration.record(duration: report.duration)
        switch report.outcome {
        case .committed:
            for partition in flight.progress where Int(partition.partition) < positions.count {
                positions[Int(partition.partition)].stored = partition.nextOffset
            }
            metrics.flushRows.record(report.rows)
            let record = FlushRecord(flushedAt: report.flushedAt, rows: report.rows, plays: report.plays, duration: report.duration)
            live.withLock {
                $0.lastFlush = record
                $0.flushFailure = nil
            }
            if failing != nil {
                failing = nil
                logger.info("realtime flushes commit again", metadata: ["kafka.topic": "\(topic)"])
                health?.update(componentName, .running)
            }
        case .fenced(let partitions):
            try recoverFromFence(partitions: partitions, storedOffsets: report.storedOffsets, mayReseek: mayReseek)
        }
    }

    /// Another consumer flushed some of these partitions: everything counted since the last
    /// commit rests on a stale view. Drop it and read again from what the store holds.
    private func recoverFromFence(partitions fenced: [Int32], storedOffsets: [Int32: Int64], mayReseek: Bool) throws {
        metrics.fencedFlushes.increment()
        live.withLock { $0.fencedFlushes += 1 }
        logger.warning("flush discarded: another consumer has written these partitions since this one read them; re-reading from the stored offsets", metadata: [
            "kafka.topic": "\(topic)", "kafka.fenced_partitions": "\(fenced.sorted())",
        ])
        counts.removeAll()
        dimensions.removeAll()
        for id in positions.indices where positions[id].isAssigned {
            let stored = storedOffsets[Int32(id)]
            let restart = stored ?? positions[id].firstConsumed
            let hadConsumed = positions[id].consumed != nil
            // The first offset consumed is kept: a store that failed over to a standby which had
            // not received this partition's first commit has nothing stored for it again.
            positions[id] = PartitionPosition(isAssigned: true, stored: stored, firstConsumed: positions[id].firstConsumed)
            guard mayReseek, let restart, hadConsumed || stored != nil else { continue }
            try consumer.seek(partition: KafkaPartition(topic: topic, id: Int32(id)), to: restart)
        }
    }

    /// The store rolled the flush back (a full disk, an I/O error): it holds the counts and
    /// offsets of the last commit. Everything counted since is dropped and read again from
    /// there, so nothing is lost or doubled; the next flush waits a growing delay.
    private func recoverFromFailedFlush(_ error: any Error, mayReseek: Bool) throws {
        metrics.failedFlushes.increment()
        let failures = (failing?.failures ?? 0) + 1
        let delay = min(retryMaximumDelay, retryDelay * (1 << min(failures - 1, 16)))
        failing = (error, failures, .now + delay)
        // No delay in it: the reason stays the same while the same failure repeats.
        let reason = "realtime flush failed (\(error)); counts since the last commit are re-read from the stored offsets and flushed again when the store accepts them"
        let now = WallClock.epochMilliseconds()
        live.withLock { $0.flushFailure = FlushFailure(reason: reason, failures: failures, since: $0.flushFailure?.since ?? now) }
        // With a health board, it logs the change (once per distinct reason).
        if failures == 1 && health == nil {
            logger.warning("realtime flush failed; re-reading from the stored offsets and retrying", metadata: [
                "kafka.topic": "\(topic)", "store.error": "\(error)",
            ])
        }
        health?.update(componentName, .degraded(reason: reason))
        // What this consumer last read or committed, unless the store can say more exactly.
        let topic = self.topic
        let stored = (try? store.run { try $0.storedOffsets(topic: topic) })
            ?? Dictionary(uniqueKeysWithValues: positions.indices.compactMap { id in positions[id].stored.map { (Int32(id), $0) } })
        counts.removeAll()
        dimensions.removeAll()
        for id in positions.indices where positions[id].isAssigned {
            let restart = stored[Int32(id)] ?? positions[id].firstConsumed
            let hadConsumed = positions[id].consumed != nil
            positions[id] = PartitionPosition(isAssigned: true, stored: stored[Int32(id)], firstConsumed: positions[id].firstConsumed)
            guard mayReseek, let restart, hadConsumed else { continue }
            try consumer.seek(partition: KafkaPartition(topic: topic, id: Int32(id)), to: restart)
        }
    }

    // MARK: Helpers

    /// The offsets stored with the counts, for partitions just assigned. No partition may start
    /// without them (a guess would lose or double plays), so while the store fails — a database
    /// restarting, whose connection `PostgresDatabase` reopens on the next call — they are asked
    /// again with the flush retry's growing delay, inside the rebalance. Past about
    /// `retryMaximumDelay` of failures the error stops the consumer, as a store that stays down should.
    private func storedOffsetsRetrying() throws -> [Int32: Int64] {
        let topic = self.topic
        let giveUp = ContinuousClock.now + retryMaximumDelay
        var delay = retryDelay
        while true {
            do {
                return try store.run { try $0.storedOffsets(topic: topic) }
            } catch {
                guard ContinuousClock.now + delay <= giveUp else { throw error }
                logger.warning("reading the stored offsets of assigned partitions failed; trying again", metadata: [
                    "kafka.topic": "\(topic)", "store.error": "\(error)", "retry.delay": "\(delay)",
                ])
                Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
                delay = min(retryMaximumDelay, delay * 2)
            }
        }
    }

    private var hasUnflushedProgress: Bool {
        positions.contains { $0.isAssigned && $0.consumed != nil && $0.consumed != $0.stored }
    }

    @inline(__always)
    private func notePosition(_ partition: Int, firstOffset: Int64) {
        if partition >= positions.count {
            // Not assigned through `assigned` (cannot happen with one topic); track it anyway.
            positions.append(contentsOf: repeatElement(PartitionPosition(), count: partition + 1 - positions.count))
        }
        if positions[partition].stored == nil && positions[partition].firstConsumed == nil {
            positions[partition].firstConsumed = firstOffset
        }
    }

    private func reject(_ rejection: EventRejection, partition: Int, offset: Int64, value: UnsafeRawBufferPointer) {
        metrics.rejected[rejection.reason]?.increment()
        rejections.record(rejection, source: "\(topic)/\(partition)@\(offset)", payload: value)
    }

    private func publishAssignment() {
        let assigned = positions.indices.filter { positions[$0].isAssigned }.map { Int32($0) }
        live.withLock { $0.assignedPartitions = assigned }
    }
}

/// Where this consumer is in one partition.
struct PartitionPosition {
    var isAssigned = false
    /// The next offset as the store holds it (as last read or committed by this consumer): where
    /// everything not yet committed starts. nil when the store has none for the partition.
    var stored: Int64?
    /// After the last message consumed; nil when none since assignment or a re-seek.
    var consumed: Int64?
    /// With nothing stored, the first offset consumed: where to re-read from after a fence.
    var firstConsumed: Int64?
}

/// A flush handed to the store thread, and the offsets it will store if it commits.
private struct FlushInFlight {
    var progress: [PartitionProgress]
    var ticket: Completion<FlushReport>
}

private struct FlushReport: Sendable {
    var outcome: FlushOutcome
    var rows: Int
    var plays: Int64
    var duration: Duration
    var flushedAt: Int64
    /// Read right after a fenced flush; empty after a committed one.
    var storedOffsets: [Int32: Int64]
    /// The flushed table, emptied in place on the store thread, to count into next.
    var emptied: CountsHandOff
    /// Realtime rows of covered hours deleted after the flush, or why that failed.
    var compactedRows: Result<Int, any Error>
}

/// Moves a counts table to the store thread and back without copying it.
private final class CountsHandOff: @unchecked Sendable {
    // Safe to share: the polling thread gives the table up when it creates this box; from then
    // on only the store thread touches it, until the box comes back in the flush's result.
    var counts: PlayCounts
    var dimensions: DimensionCounts

    init(_ counts: PlayCounts, _ dimensions: DimensionCounts) {
        self.counts = counts
        self.dimensions = dimensions
    }
}
