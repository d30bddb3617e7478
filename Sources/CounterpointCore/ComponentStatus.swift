/// What the long-running components report about themselves, in the one shape each is kept
/// in, passed along as it is: the consumer's `RealtimeStatus` and the archiver's
/// `ArchiveStatus` are what `/v1/status` shows of them (beside what the stores say), what the
/// tests read and what the components update.

/// What the consumer reports about itself for `/v1/status`, beside what the store says
/// (per-partition offsets and lag are in the store with every flush).
public struct RealtimeStatus: Sendable {
    /// Consumed messages per second over the last `RealtimeConfiguration.rateWindow`.
    public var eventsPerSecond: Double
    /// Messages consumed since start (valid and rejected; re-reads after a fenced flush included).
    public var eventsConsumed: Int
    /// Rejected events by reason since start, with the most recent as samples (source `plays/3@4567`).
    public var rejections: RejectionLog
    /// The most recent offset gaps: data the broker deleted before it was consumed.
    public var offsetGaps: [OffsetGap]
    /// Events lost to offset gaps since start (the batch layer heals them).
    public var skippedEvents: Int64
    /// Flushes discarded because another consumer had written their partitions first.
    public var fencedFlushes: Int
    /// The last flush that committed; nil before the first one.
    public var lastFlush: FlushRecord?
    /// Why flushes fail, while they do (nil once one commits again).
    public var flushFailure: FlushFailure?
    /// Partitions of the topic this consumer holds now.
    public var assignedPartitions: [Int32]

    public init(eventsPerSecond: Double = 0, eventsConsumed: Int = 0, rejections: RejectionLog = RejectionLog(),
                offsetGaps: [OffsetGap] = [], skippedEvents: Int64 = 0, fencedFlushes: Int = 0, lastFlush: FlushRecord? = nil,
                flushFailure: FlushFailure? = nil, assignedPartitions: [Int32] = []) {
        self.eventsPerSecond = eventsPerSecond
        self.eventsConsumed = eventsConsumed
        self.rejections = rejections
        self.offsetGaps = offsetGaps
        self.skippedEvents = skippedEvents
        self.fencedFlushes = fencedFlushes
        self.lastFlush = lastFlush
        self.flushFailure = flushFailure
        self.assignedPartitions = assignedPartitions
    }
}

/// One committed flush.
public struct FlushRecord: Sendable, Hashable {
    /// Epoch milliseconds, as stored with the flush.
    public var flushedAt: Int64
    /// (track, hour) rows written.
    public var rows: Int
    /// Plays added.
    public var plays: Int64
    public var duration: Duration

    public init(flushedAt: Int64, rows: Int, plays: Int64, duration: Duration) {
        self.flushedAt = flushedAt
        self.rows = rows
        self.plays = plays
        self.duration = duration
    }
}

/// Flushes failing in a row: the store rolled them back (a full disk), so the consumer re-reads
/// from the last committed offsets and retries. Nothing is lost; the counts are late.
public struct FlushFailure: Sendable, Hashable {
    public var reason: String
    /// Failed flushes since the last commit.
    public var failures: Int
    /// When the first of them failed, epoch milliseconds.
    public var since: Int64

    public init(reason: String, failures: Int, since: Int64) {
        self.reason = reason
        self.failures = failures
        self.since = since
    }
}

/// What the archiver has done so far, for `/v1/status` and for tests. Counts are since start.
public struct ArchiveStatus: Sendable, Equatable {
    /// The partitions of the archived topic this archiver holds now.
    public var assignedPartitions: [Int32] = []
    /// Hours with files but no closed marker yet, ascending.
    public var openHours: [Hour] = []
    /// The newest hour this archiver has closed.
    public var lastClosedHour: Hour?
    /// The stream time (see `Archiver`), epoch milliseconds; nil before it is known.
    public var streamTimeMilliseconds: Int64?
    /// Valid events written (to hour files and late files).
    public var eventsArchived = 0
    /// Of those, events written to late files because their hour was already closed.
    public var lateEvents = 0
    /// Messages that are not valid events, written to the hour file of their Kafka timestamp
    /// for `batch` to count as rejected.
    public var invalidMessages = 0
    /// Null values (tombstones) and values of only whitespace: nothing to archive, and a
    /// blank line is not an event for `batch` either.
    public var skippedMessages = 0
    /// Hours closed by this archiver.
    public var closedHours = 0
    /// Jumps in a partition's offsets that the broker's retention explains: those messages
    /// were never archived, and only the realtime layer may have counted them.
    public var offsetResets: [String] = []
    /// Messages those jumps skipped, over every reset: the archive lacks them, so a batch
    /// rebuild of their hours would count less than the realtime layer did.
    public var gapSkippedMessages: Int64 = 0
    /// The offsets last committed to Kafka, per partition: everything before them is on disk.
    public var committedOffsets: [Int32: Int64] = [:]
    /// Wall-clock time of the last successful commit, epoch milliseconds.
    public var lastCommitMilliseconds: Int64?
    /// Whether the consumer loop is running.
    public var isRunning = false

    public init() {}
}
