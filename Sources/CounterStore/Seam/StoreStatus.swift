import CounterpointCore

/// The stores' part of `/v1/status`, read from one snapshot (`CounterReader.status`).
public struct StoreStatus: Sendable, Hashable {
    public var coverage: Coverage
    public var freshness: Freshness
    /// The latest batch runs, newest first.
    public var recentRuns: [BatchRun]
    /// The realtime layer's position in every partition it has consumed.
    public var partitions: [PartitionStatus]
    /// The latest hour holding merged plays; nil when the store holds none.
    public var latestCounts: LatestCounts?
}

/// The latest UTC hour holding a non-zero merged count, and the layer that answers it there:
/// where a stats page whose period holds nothing can send its reader.
public struct LatestCounts: Sendable, Hashable {
    public var hour: Hour
    /// `.batch` when the batch layer covers the hour, else `.realtime`.
    public var source: CountSource

    public init(hour: Hour, source: CountSource) {
        self.hour = hour
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

/// One batch run, as recorded with the rows it wrote.
public struct BatchRun: Sendable, Hashable {
    /// Assigned by the batch writer's `replace` (ascending); any value given to it is ignored.
    public var id: Int64
    /// The span of the hours the run replaced, from the first one's start to the last one's
    /// end: set by the batch writer's `replace` from what it replaced; any value given to it is ignored.
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

    public init(id: Int64 = 0, range: HourRange = HourRange(Hour(index: 0), Hour(index: 0)), startedAt: Int64, finishedAt: Int64, eventsRead: Int, valid: Int,
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
