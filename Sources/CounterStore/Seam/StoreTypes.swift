import CounterpointCore

/// Where the two stores live: `<directory>/realtime.sqlite` and `<directory>/batch.sqlite`.
///
/// Two files, not two tables, so that a batch rebuild (one long write transaction on the
/// batch file) never holds the lock that realtime flushes need.
public struct StoreLocation: Sendable, Hashable {
    public var directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public var realtimePath: String { directory + "/realtime.sqlite" }
    public var batchPath: String { directory + "/batch.sqlite" }
}

/// How far a flush consumed one Kafka partition.
public struct PartitionProgress: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    /// The next offset this flush started from, as the consumer believes it is stored:
    /// nil when nothing is stored yet for the partition. The flush commits only if it matches.
    public var startOffset: Int64?
    /// The next offset to consume after this flush.
    public var nextOffset: Int64
    /// The partition's high watermark when the flush was taken, if known (for lag).
    public var highWatermark: Int64?

    public init(topic: String, partition: Int32, startOffset: Int64?, nextOffset: Int64, highWatermark: Int64?) {
        self.topic = topic
        self.partition = partition
        self.startOffset = startOffset
        self.nextOffset = nextOffset
        self.highWatermark = highWatermark
    }
}

/// What became of a flush.
public enum FlushOutcome: Sendable, Equatable {
    case committed
    /// Nothing was written: for these partitions the stored next offset was not the flush's
    /// start offset — another consumer has written them since (a rebalance), so this
    /// consumer's view is stale and it must re-read `storedOffsets` before going on.
    case fenced(partitions: [Int32])
}

/// One batch run, as recorded with the rows it wrote.
public struct BatchRun: Sendable, Hashable {
    /// Assigned by `BatchStore.replace` (ascending); any value given to it is ignored.
    public var id: Int64
    public var range: HourRange
    /// Epoch milliseconds.
    public var startedAt: Int64
    /// Epoch milliseconds.
    public var finishedAt: Int64
    public var eventsRead: Int
    public var valid: Int
    public var duplicates: Int
    public var rejected: Int
    public var rejectedByReason: [String: Int]
    public var tracks: Int
    public var rows: Int

    public init(id: Int64 = 0, range: HourRange, startedAt: Int64, finishedAt: Int64, eventsRead: Int, valid: Int,
                duplicates: Int, rejected: Int, rejectedByReason: [String: Int], tracks: Int, rows: Int) {
        self.id = id
        self.range = range
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.eventsRead = eventsRead
        self.valid = valid
        self.duplicates = duplicates
        self.rejected = rejected
        self.rejectedByReason = rejectedByReason
        self.tracks = tracks
        self.rows = rows
    }
}

/// One bucket of a timeline.
public struct TimelinePoint: Sendable, Hashable {
    /// The start of the bucket (an hour, or the first hour of a UTC day).
    public var start: Hour
    public var plays: Int64
    /// `.batch` when every hour of the bucket (within the range) is covered, `.realtime` when
    /// none is, `.mixed` otherwise.
    public var source: CountSource

    public init(start: Hour, plays: Int64, source: CountSource) {
        self.start = start
        self.plays = plays
        self.source = source
    }
}

/// How current the counts are.
public struct Freshness: Sendable, Hashable {
    /// The end of the batch layer's coverage (`Coverage.coveredUntil`); nil before any batch run.
    public var batchCoveredUntil: Hour?
    /// When the realtime layer last committed a flush (epoch ms); nil before the first flush.
    public var realtimeFlushedAt: Int64?
    /// Σ (high watermark − next offset) over partitions, as recorded at their last flush;
    /// nil when no partition has recorded a high watermark.
    public var realtimeLagEvents: Int64?
    /// On a PostgreSQL hot standby, how far behind its primary the answers are (ms; 0 when it
    /// has replayed everything streamed to it); nil on a primary and on SQLite. See
    /// docs/postgresql.md, "Standbys and failover".
    public var standbyLagMilliseconds: Int64?

    public init(batchCoveredUntil: Hour?, realtimeFlushedAt: Int64?, realtimeLagEvents: Int64?,
                standbyLagMilliseconds: Int64? = nil) {
        self.batchCoveredUntil = batchCoveredUntil
        self.realtimeFlushedAt = realtimeFlushedAt
        self.realtimeLagEvents = realtimeLagEvents
        self.standbyLagMilliseconds = standbyLagMilliseconds
    }
}

/// The realtime layer's position in one partition, as of its last flush.
public struct PartitionStatus: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var nextOffset: Int64
    public var highWatermark: Int64?
    /// `highWatermark − nextOffset` (never negative); nil without a high watermark.
    public var lag: Int64?

    public init(topic: String, partition: Int32, nextOffset: Int64, highWatermark: Int64?) {
        self.topic = topic
        self.partition = partition
        self.nextOffset = nextOffset
        self.highWatermark = highWatermark
        self.lag = highWatermark.map { max(0, $0 - nextOffset) }
    }
}

/// The stores' part of `/v1/status`, read from one snapshot (`CounterReader.status`).
public struct StoreStatus: Sendable, Hashable {
    public var coverage: Coverage
    public var freshness: Freshness
    /// The latest batch runs, newest first.
    public var recentRuns: [BatchRun]
    /// The realtime layer's position in every partition it has consumed.
    public var partitions: [PartitionStatus]
}
