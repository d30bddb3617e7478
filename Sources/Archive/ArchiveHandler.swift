import CounterpointCore
import Kafka
import Logging
import Runtime

/// The consumer's side of the archiver: files every message in its hour, closes hours as the
/// stream passes them, and commits offsets only after what precedes them is fsynced.
///
/// Everything here runs on the consumer's thread, inside `KafkaConsumer.run`; only `status`
/// is shared, and it is published after every batch.
final class ArchiveHandler: KafkaConsumerHandler {
    private let consumer: KafkaConsumer
    private let files: ArchiveFiles
    private let topic: String
    private let allowedLatenessMilliseconds: Int64
    private let commitInterval: Duration
    private let status: SharedArchiveStatus
    private let logger: Logger
    private let metrics = ArchiveMetrics()

    private var clock = StreamClock()
    private let wallClock: WallClock
    /// The newest event time already reported as ahead of the wall clock (epoch ms), and how
    /// often such a report may come: a producer whose clock runs ahead makes every event newer.
    private var reportedAheadUntil = Int64.min
    private let aheadReports = LogThrottle(every: .seconds(600))
    /// The offset of the next message of each assigned partition, once known.
    private var nextOffsets: [Int32: Int64] = [:]
    /// Offsets consumed (and written) but not yet committed.
    private var uncommitted: [Int32: Int64] = [:]
    private var lastCheckpoint = ContinuousClock.now
    private var hasUnsyncedWrites = false
    /// Set by the first failed write, sync or close (a full disk): from then on nothing is
    /// committed, since a buffered line may be lost; the archiver that replaces this one
    /// re-archives from the last commit, which only repeats events.
    private var fileFailure: (any Error)?
    private var local = ArchiveStatus()

    init(consumer: KafkaConsumer, files: ArchiveFiles, configuration: ArchiverConfiguration,
         status: SharedArchiveStatus, logger: Logger) {
        self.consumer = consumer
        self.files = files
        self.topic = configuration.topic
        self.allowedLatenessMilliseconds = Int64(configuration.allowedLateness.components.seconds) * 1000
            + configuration.allowedLateness.components.attoseconds / 1_000_000_000_000_000
        self.commitInterval = configuration.commitInterval
        self.wallClock = configuration.clock
        self.status = status
        self.logger = logger
        local.isRunning = true
        publish()
    }

    // MARK: KafkaConsumerHandler

    /// Resumes every partition at the group's committed offset; partitions without one start
    /// at the earliest retained message (the consumer's `autoOffsetReset`).
    func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
        let committed = try committedOffsets(for: partitions)
        for partition in partitions {
            if let offset = committed[partition] { nextOffsets[partition.id] = offset }
        }
        clock.assign(partitions.map(\.id))
        local.assignedPartitions = clock.assignedPartitions
        for (partition, offset) in committed { local.committedOffsets[partition.id] = offset }
        logger.info("archiving partitions", metadata: [
            "archive.partitions": "\(partitions.sorted())",
            "archive.committed_offsets": "\(committed.sorted { $0.key < $1.key }.map { "\($0.key)@\($0.value)" })",
        ])
        publish()
        return committed
    }

    func consume(_ batch: KafkaMessageBatch) throws {
        var archived = 0, late = 0, invalid = 0, skipped = 0
        var now: Int64?
        for message in batch {
            let partition = message.partition
            nextOffsets[partition] = message.offset + 1
            uncommitted[partition] = message.offset + 1
            guard let value = message.value else {
                skipped += 1
                continue
            }
            let hour: Hour
            let valid: Bool
            switch EventParser.parse(value) {
            case .success(let event):
                hour = event.hour
                valid = true
                clock.observe(partition: partition, occurredAtMilliseconds: event.occurredAtMilliseconds)
            case .failure(let rejection):
                guard rejection.reason != .empty else {
                    skipped += 1
                    continue
                }
                if now == nil { now = wallClock.epochMilliseconds() }
                hour = ArchivedLine.fallbackHour(kafkaTimestampMilliseconds: message.timestampMilliseconds, nowMilliseconds: now!)
                valid = false
            }
            let wentLate = try durably {
                try ArchivedLine.withLine(of: value) { line in
                    try files.write(line, hour: hour, partition: partition)
                }
            }
            if valid {
                archived += 1
                if wentLate { late += 1 }
            } else {
                invalid += 1
            }
        }
        hasUnsyncedWrites = hasUnsyncedWrites || archived + invalid > 0
        local.eventsArchived += archived
        local.lateEvents += late
        local.invalidMessages += invalid
        local.skippedMessages += skipped
        metrics.events.increment(by: archived)
        if late > 0 { metrics.lateEvents.increment(by: late) }
        if invalid > 0 { metrics.invalidMessages.increment(by: invalid) }
        if skipped > 0 { metrics.skippedMessages.increment(by: skipped) }

        try closeDueHours()
        if ContinuousClock.now - lastCheckpoint >= commitInterval { try checkpoint(commit: true) }
        publish()
    }

    func idle() throws {
        try closeDueHours()
        if ContinuousClock.now - lastCheckpoint >= commitInterval { try checkpoint(commit: true) }
        publish()
    }

    /// The last chance to save the partitions' progress: fsync and close everything, then commit.
    /// A lost assignment is not committed (the group has moved on and would refuse it); the
    /// new owner re-archives from the last commit, which only repeats events.
    func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws {
        try durably { try files.closeAll() }
        hasUnsyncedWrites = false
        if reason != .lost { try commit() }
        for partition in partitions {
            uncommitted.removeValue(forKey: partition.id)
            nextOffsets.removeValue(forKey: partition.id)
        }
        clock.revoke(partitions.map(\.id))
        local.assignedPartitions = clock.assignedPartitions
        publish()
    }

    func offsetReset(_ reset: KafkaOffsetReset) throws {
        let metadata: Logger.Metadata = [
            "archive.partition": "\(reset.partition)", "archive.expected_offset": "\(reset.expectedOffset)",
            "archive.resumed_offset": "\(reset.resumedOffset)", "archive.skipped": "\(reset.skippedMessages)",
        ]
        if reset.wentBack {
            logger.warning("archive offsets went back: the partition's log ends before the offset to archive next (the topic was made again, or the broker lost the end of its log); archiving goes on from its oldest offset", metadata: metadata)
        } else {
            logger.error("archive gap: the broker no longer had the messages to archive", metadata: metadata)
        }
        metrics.offsetResets.increment()
        if reset.skippedMessages > 0 {
            metrics.gapSkippedMessages.increment(by: reset.skippedMessages)
            local.gapSkippedMessages += reset.skippedMessages
        }
        local.offsetResets.append(reset.description)
        if local.offsetResets.count > 20 { local.offsetResets.removeFirst() }
    }

    /// After the consumer loop ended without the group's revocation (it failed): keep what was
    /// written, commit nothing.
    func abandon() {
        do { try files.closeAll() } catch {
            logger.error("archive files could not be synced while stopping", metadata: ["archive.error": "\(error)"])
        }
        local.isRunning = false
        local.assignedPartitions = []
        publish()
    }

    var eventsArchived: Int { local.eventsArchived }

    /// After a clean end of the loop.
    func finish() {
        local.isRunning = false
        publish()
    }

    // MARK: Hours, syncs and commits

    /// Closes every open hour that the stream has passed by more than the allowed lateness.
    private func closeDueHours() throws {
        let now = wallClock.epochMilliseconds()
        reportEventsAhead(of: now)
        guard let streamTime = clock.streamTime(caughtUp: isCaughtUp, now: now) else { return }
        local.streamTimeMilliseconds = streamTime
        metrics.streamTime.record(streamTime / 1000)
        let horizon = streamTime - allowedLatenessMilliseconds
        for hour in files.openHours where (hour.index + 1) * 3_600_000 <= horizon {
            try durably { try files.closeHour(hour) }
            metrics.closedHours.increment()
            local.closedHours += 1
            local.lastClosedHour = max(local.lastClosedHour ?? hour, hour)
            logger.info("archive hour closed", metadata: ["archive.hour": "\(hour)", "archive.stream_time": "\(UTCTime.format(epochMilliseconds: streamTime))"])
        }
        files.forgetClosedHours(before: Hour(epochMilliseconds: horizon).advanced(by: -48))
    }

    /// A warning when the newest event time is more than `aheadTolerance` past the wall clock
    /// and newer than the last one reported, at most once every 10 minutes: such an event is
    /// archived in its hour, but hours close by the clock, not by it.
    private func reportEventsAhead(of now: Int64) {
        guard let newest = clock.newestEvent, newest > now + Self.aheadToleranceMilliseconds,
              newest > reportedAheadUntil, aheadReports.admit() != nil else { return }
        reportedAheadUntil = newest
        logger.warning("archive saw an event dated ahead of this machine's clock (a producer's clock is wrong?); it is filed in its hour, and hours still close by the clock", metadata: [
            "archive.event_time": "\(UTCTime.format(epochMilliseconds: newest))",
            "archive.clock": "\(UTCTime.format(epochMilliseconds: now))",
        ])
    }

    /// How far past the wall clock an event may be dated before it is reported: clocks of
    /// producers and of this machine differ by a little.
    static let aheadToleranceMilliseconds: Int64 = 60_000

    /// Whether `partition` has nothing left to read as of the last fetch.
    private func isCaughtUp(_ partition: Int32) -> Bool {
        guard let marks = consumer.watermarks(topic: topic, partition: partition) else { return false }
        if let next = nextOffsets[partition] { return next >= marks.high }
        // Nothing consumed and no committed offset: caught up only if the partition holds nothing.
        return marks.high == 0 || marks.low == marks.high
    }

    /// Fsyncs everything written, then (with `commit`) commits the offsets after it.
    private func checkpoint(commit shouldCommit: Bool) throws {
        if hasUnsyncedWrites {
            let started = ContinuousClock.now
            try durably { try files.syncAll() }
            metrics.fsyncDuration.record(duration: ContinuousClock.now - started)
            hasUnsyncedWrites = false
        }
        try durably { try files.closeLateFiles() }
        lastCheckpoint = ContinuousClock.now
        if shouldCommit { try commit() }
    }

    /// How long a commit may wait for the group coordinator. While the cluster cannot be
    /// reached a commit gets no answer; without a bound it held the poll loop — and the
    /// health probe that reports the cluster unreachable — for a minute and more.
    static let commitTimeout: Duration = .seconds(5)

    /// Commits the uncommitted offsets; a failure that a later commit may fix (no answer within
    /// `commitTimeout` included) is logged and retried at the next checkpoint (the data is on
    /// disk either way; should a commit land late, after a newer one, the group's offsets are an
    /// earlier checkpoint's, which only repeats archived events, as after a kill).
    private func commit() throws {
        guard !uncommitted.isEmpty, fileFailure == nil else { return }
        var offsets: [KafkaPartition: Int64] = [:]
        for (partition, offset) in uncommitted { offsets[KafkaPartition(topic: topic, id: partition)] = offset }
        if case .failure(let error) = Result(catching: { () throws(KafkaError) in
            try consumer.commit(offsets, timeout: Self.commitTimeout)
        }) {
            guard !error.isFatal else { throw error }
            metrics.commitFailures.increment()
            logger.warning("archive offsets not committed; retrying at the next checkpoint", metadata: ["archive.error": "\(error)"])
            return
        }
        local.committedOffsets.merge(uncommitted) { $1 }
        local.lastCommitMilliseconds = wallClock.epochMilliseconds()
        uncommitted.removeAll(keepingCapacity: true)
    }

    /// Runs a file operation; its failure stops all further commits (see `fileFailure`).
    private func durably<T>(_ body: () throws -> T) throws -> T {
        if let fileFailure { throw fileFailure }
        do {
            return try body()
        } catch {
            fileFailure = error
            throw error
        }
    }

    private func committedOffsets(for partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
        // The group coordinator may still be settling right after a rebalance.
        for _ in 1..<3 {
            let answer = Result { () throws(KafkaError) in try consumer.committedOffsets(for: partitions) }
            switch answer {
            case .success(let offsets):
                return offsets
            case .failure(let error) where error.isRetriable:
                logger.warning("committed offsets not available yet; asking again", metadata: ["archive.error": "\(error)"])
            case .failure(let error):
                throw error
            }
        }
        return try consumer.committedOffsets(for: partitions)
    }

    private func publish() {
        local.openHours = files.openHours
        metrics.openHours.record(local.openHours.count)
        let snapshot = local
        status.update { $0 = snapshot }
    }
}

/// The status the consumer's thread publishes and any thread reads.
final class SharedArchiveStatus: Sendable {
    private let state = Locked(ArchiveStatus())

    var current: ArchiveStatus { state.withLock { $0 } }

    func update(_ body: (inout ArchiveStatus) -> Void) {
        state.withLock { body(&$0) }
    }
}
