import CounterpointCore

// The store seam: what the layers write and what the reader reads, independent of the engine
// behind it. A backend (SQLite files under a data directory, or a PostgreSQL database) implements the writers and
// `LayerReads`; the merged queries (`CounterReader`) are written once, over `LayerReads`.

/// The realtime layer's writer: one per consumer process, used from one thread.
public protocol RealtimeWriter: AnyObject {
    /// Adds `rows` (`CounterRows.realtime`, one per subject kind: every signal, dimension counts
    /// and listener sketches) to the realtime counters of their kinds — counts add up, dimension
    /// counts merge (`DimensionEncoding.merge`), sketches unite — and records `progress`, in ONE
    /// transaction, with the compare-and-set fencing on each partition's stored next offset (see
    /// `FlushOutcome`).
    func apply(_ rows: [CounterRows], progress: [PartitionProgress], flushedAt: Int64) throws -> FlushOutcome

    /// The next offset to consume, per partition of `topic`, as of the last committed flush.
    func storedOffsets(topic: String) throws -> [Int32: Int64]

    /// Deletes the stored offsets of `topic`, so that consumers start it from the broker's
    /// oldest offset (for a topic made again, as an embedded broker's is at each start);
    /// returns how many partitions had one. The counts stay.
    func forgetOffsets(topic: String) throws -> Int

    /// Deletes up to `maxRows` realtime rows of hours the batch layer has covered (the merge rule
    /// never reads them), in one short transaction so that flushes interleave with a long
    /// compaction. Returns the rows deleted: fewer than `maxRows` means nothing covered is left.
    /// The dimension counts and listener sketches of the same (track, hour)s go in the same
    /// transaction; every subject kind's rows are compacted, the creators' first.
    func compactCoveredHours(maxRows: Int) throws -> Int
}

extension RealtimeWriter {
    /// A flush of these increments, dimension counts and listener sketches of one kind's subjects.
    public func apply(increments: some Collection<CountRow>, dimensions: [EncodedRow] = [], listeners: [EncodedRow] = [],
                      of kind: SubjectKind = .track, progress: [PartitionProgress], flushedAt: Int64) throws -> FlushOutcome {
        try apply([CounterRows.realtime(increments, dimensions: dimensions, listeners: listeners, of: kind)], progress: progress,
                  flushedAt: flushedAt)
    }

    /// A flush of one kind's rows.
    public func apply(_ rows: CounterRows, progress: [PartitionProgress], flushedAt: Int64) throws -> FlushOutcome {
        try apply([rows], progress: progress, flushedAt: flushedAt)
    }
}

/// The batch layer's writer: replaces whole hours atomically. Used from one thread.
public protocol BatchWriter: AnyObject {
    /// Atomically replaces every row of the hours in `ranges` — plays and dimension counts — with
    /// the rows `rows` writes (and the day and month rollups of both), marks the ranges covered and records the run
    /// that `rows` returns — in ONE transaction: a reader sees the old counts or the new, never a
    /// mix, and an error or a killed process changes nothing.
    ///
    /// Rows may arrive in any order; rows for the same (track, hour) add up; rows with 0 plays
    /// are skipped. A row outside `ranges` throws `CounterStoreError.rowOutsideRange` and nothing
    /// is changed. `sources` (may be empty) records, in the same transaction, what each hour
    /// was computed from, for the incremental batch.
    @discardableResult
    func replace(ranges: [HourRange], startedAt: Int64, sources: [HourSource],
                 rows: (BatchRowWriter) throws -> BatchRun) throws -> BatchRun

    /// The hours the batch layer has covered.
    func coverage() throws -> Coverage

    /// What each covered hour was last computed from, for the hours that recorded it.
    func hourSources() throws -> [Hour: HourSource]

    /// The latest runs, newest first.
    func recentRuns(limit: Int) throws -> [BatchRun]
}

extension BatchWriter {
    /// `replace(ranges:startedAt:sources:rows:)` without recorded sources.
    @discardableResult
    public func replace(ranges: [HourRange], startedAt: Int64, rows: (BatchRowWriter) throws -> BatchRun) throws -> BatchRun {
        try replace(ranges: ranges, startedAt: startedAt, sources: [], rows: rows)
    }

    /// `replace(ranges:startedAt:rows:)` over one range, for a run whose statistics are known up front.
    @discardableResult
    public func replace(range: HourRange, run: BatchRun, rows: (BatchRowWriter) throws -> Void) throws -> BatchRun {
        try replace(ranges: [range], startedAt: run.startedAt, sources: []) { writer in
            try rows(writer)
            return run
        }
    }
}

/// Hands a batch run's rows to `BatchWriter.replace`. Valid only inside the closure given to
/// `replace`; do not keep it.
public struct BatchRowWriter {
    /// One row as a backend's sink receives it. Its blobs are lent for the call only: a sink
    /// copies what it keeps.
    public struct Row {
        /// Whose row: `counts.id` is the id of a subject of this kind.
        public var kind: SubjectKind
        public var counts: CountRow
        /// `DimensionEncoding`; empty when the row has none.
        public var dimensions: UnsafeRawBufferPointer
        /// Plays that carried a listener id.
        public var listenerPlays: Int64
        /// The listeners' sketch (`HyperLogLog.encoded`); empty when the row has none.
        public var listeners: UnsafeRawBufferPointer
    }

    private let sink: (Row) throws -> Void

    /// For backends: `sink` receives every row written. Rows for the same (track, hour) add up,
    /// their dimension counts merge (`DimensionEncoding.merge`) and their sketches unite.
    public init(sink: @escaping (Row) throws -> Void) { self.sink = sink }

    /// Adds `plays` to (track, hour) of the run, `dimensions` (`DimensionEncoding`, of the same
    /// plays) to its dimension counts, and `listeners` (a sketch of the listeners of
    /// `listenerPlays` of the plays) to its listeners. Throws when `hour` is outside the run's
    /// ranges.
    public func write(trackID: Int64, hour: Hour, plays: Int64, dimensions: [UInt8] = [], listenerPlays: Int64 = 0,
                      listeners: [UInt8] = []) throws {
        try write(trackID: trackID, hour: hour, counts: SignalCounts(plays: plays), dimensions: dimensions,
                  listenerPlays: listenerPlays, listeners: listeners)
    }

    /// The same with every signal's count (SPEC §11).
    public func write(trackID: Int64, hour: Hour, counts: SignalCounts, dimensions: [UInt8] = [], listenerPlays: Int64 = 0,
                      listeners: [UInt8] = []) throws {
        try dimensions.withUnsafeBytes { dimensions in
            try listeners.withUnsafeBytes { listeners in
                try write(trackID: trackID, hour: hour, counts: counts, borrowingDimensions: dimensions,
                          listenerPlays: listenerPlays, borrowingListeners: listeners)
            }
        }
    }

    /// `write(trackID:hour:counts:dimensions:listenerPlays:listeners:)` with the blobs lent, not
    /// copied into arrays: what a run's rows come in, back to back in one buffer (`EncodedRows`).
    public func write(trackID: Int64, hour: Hour, counts: SignalCounts, borrowingDimensions dimensions: UnsafeRawBufferPointer,
                      listenerPlays: Int64, borrowingListeners listeners: UnsafeRawBufferPointer) throws {
        try write(.track(trackID), hour: hour, counts: counts, borrowingDimensions: dimensions, listenerPlays: listenerPlays,
                  borrowingListeners: listeners)
    }

    /// The same for any subject: a creator's rows (SPEC §11) go to the creators' tables.
    public func write(_ subject: Subject, hour: Hour, counts: SignalCounts, borrowingDimensions dimensions: UnsafeRawBufferPointer,
                      listenerPlays: Int64, borrowingListeners listeners: UnsafeRawBufferPointer) throws {
        try sink(Row(kind: subject.kind, counts: CountRow(id: subject.id, hour: hour, counts: counts), dimensions: dimensions,
                     listenerPlays: listenerPlays, listeners: listeners))
    }

    /// `write(_:hour:counts:borrowingDimensions:…)` with the blobs as arrays.
    public func write(_ subject: Subject, hour: Hour, counts: SignalCounts, dimensions: [UInt8] = [], listenerPlays: Int64 = 0,
                      listeners: [UInt8] = []) throws {
        try dimensions.withUnsafeBytes { dimensions in
            try listeners.withUnsafeBytes { listeners in
                try write(subject, hour: hour, counts: counts, borrowingDimensions: dimensions, listenerPlays: listenerPlays,
                          borrowingListeners: listeners)
            }
        }
    }
}

@available(*, unavailable)
extension BatchRowWriter: Sendable {}

/// What is fixed within one snapshot of both layers.
public struct SnapshotState: Sendable, Hashable {
    public let coverage: Coverage
    /// How current the snapshot's counts are: its coverage's end, the realtime layer's last
    /// flush and lag, the standby's lag.
    public let freshness: Freshness
    /// Names the realtime rows this snapshot sees: two snapshots with the same version see the
    /// same realtime rows, so what was read from one may be reused by the other (a reader's
    /// ranking reuses its summed realtime window). nil: unknown, reuse nothing.
    public let realtimeVersion: String?

    public init(coverage: Coverage, realtimeFlushedAt: Int64?, realtimeLagEvents: Int64?, realtimeVersion: String? = nil,
                standbyLagMilliseconds: Int64? = nil) {
        self.coverage = coverage
        freshness = Freshness(batchCoveredUntil: coverage.coveredUntil, realtimeFlushedAt: realtimeFlushedAt,
                              realtimeLagEvents: realtimeLagEvents, standbyLagMilliseconds: standbyLagMilliseconds)
        self.realtimeVersion = realtimeVersion
    }
}

/// The primitive reads a backend offers the merged queries. Every read between
/// `beginSnapshots()` and `endSnapshots()` sees one snapshot of each layer.
///
/// Snapshot order matters: the realtime snapshot must be taken BEFORE the batch snapshot.
/// Compaction deletes realtime rows only after the batch layer has committed their coverage,
/// so a realtime snapshot that lacks compacted rows was taken after that commit — and so is
/// the batch snapshot taken after it, which then covers those hours. The other order could
/// read an hour as uncovered from an old batch snapshot and as compacted from a new realtime one.
public protocol LayerReads: AnyObject {
    /// Takes new snapshots of both layers, ending those still open first (a store whose reads
    /// are round trips ends and begins in one).
    func beginSnapshots() throws -> SnapshotState
    func endSnapshots()

    /// Σ batch plays of `subject` over the spans of `part`.
    func batchSum(_ subject: Subject, over part: RollupDecomposition) throws -> Int64
    /// The batch rollup rows of `track` in `span`: (bucket key, count of `signal`), any order.
    func batchBuckets(_ subject: Subject, in span: RollupSpan, signal: Signal, _ visit: (Int64, Int64) -> Void) throws
    /// Every signal's batch sum of `track` over the spans of `part`.
    func batchCounts(_ subject: Subject, over part: RollupDecomposition) throws -> SignalCounts
    /// Sorted access for rankings: the tracks of one rollup bucket by `signal`'s count descending
    /// (ties by track id; for a signal other than plays, its positive counts only), `limit`
    /// entries ranked after `after` (from the first when nil), sought through the bucket's ranked
    /// index of the signal.
    func batchRanked(_ kind: SubjectKind, level: RollupLevel, key: Int64, signal: Signal, after: RankedEntry?, limit: Int) throws -> [RankedEntry]

    /// Σ realtime plays of `track` over `gaps`.
    func realtimeSum(_ subject: Subject, over gaps: [HourRange]) throws -> Int64
    /// Point lookups: for each of `tracks` (in order, duplicates allowed), Σ batch plays over
    /// `batchParts` and Σ realtime plays over `realtimeGaps` — by default `batchSum` for each
    /// part, then `realtimeSum`, track by track; a store whose reads are round trips asks for
    /// every track and both layers in one.
    func trackSums(_ kind: SubjectKind, ids tracks: [Int64], batchParts: [RollupDecomposition], realtimeGaps: [HourRange]) throws -> [TrackPlays]
    /// The realtime rows of `track` in `gap`: (hour, count of `signal`), any order.
    func realtimeHours(_ subject: Subject, in gap: HourRange, signal: Signal, _ visit: (Hour, Int64) -> Void) throws
    /// Every signal's realtime sum of `track` over `gaps`.
    func realtimeCounts(_ subject: Subject, over gaps: [HourRange]) throws -> SignalCounts
    /// Every realtime row in `gap` that holds `signal`: (track, its count), several per track, in runs of strictly
    /// ascending track ids (a run ends where the next id is not larger: on SQLite one run per
    /// hour, on PostgreSQL one run of per-track sums). The realtime layer holds only the
    /// uncovered window, so this reads what has not been batched yet, never history.
    func realtimeRows(_ kind: SubjectKind, in gap: HourRange, signal: Signal, _ visit: (Int64, Int64) -> Void) throws
    /// The hours of `gap` that hold realtime rows, ascending, each with its stamp: the number of
    /// the last commit that changed its rows (`RealtimeHourStamps`), so that the same stamp in
    /// two snapshots means the same rows. nil when this snapshot cannot vouch for its stamps (a
    /// store that keeps none; changes a writer of an older version did not stamp): the reader
    /// then sums the whole window again.
    func realtimeHourStamps(in gap: HourRange) throws -> [(hour: Int64, stamp: Int64)]?

    /// The batch dimension blobs (`DimensionEncoding`) of `track` over the spans of `part`, any
    /// order (like `batchSum`, one step whatever the range).
    func batchDimensions(_ subject: Subject, over part: RollupDecomposition, _ visit: (UnsafeRawBufferPointer) throws -> Void) throws
    /// The realtime dimension blobs of `track` in `gaps`, any order.
    func realtimeDimensions(_ subject: Subject, over gaps: [HourRange], _ visit: (UnsafeRawBufferPointer) throws -> Void) throws
    /// A waveform or breakdown: `track`'s sums as `trackSums` gives them, and its dimension
    /// blobs over the same parts and gaps, any order — by default `trackSums`, then
    /// `batchDimensions` per part and `realtimeDimensions`; a store whose reads are round trips
    /// asks for all of it in one.
    func trackDimensions(_ subject: Subject, batchParts: [RollupDecomposition], realtimeGaps: [HourRange],
                         _ visit: (UnsafeRawBufferPointer) throws -> Void) throws -> TrackPlays

    /// The batch listener sketches of `track` over the spans of `part`, with the plays that
    /// carried a listener id in each row: (listener plays, sketch), any order.
    func batchListeners(_ subject: Subject, over part: RollupDecomposition, _ visit: (Int64, UnsafeRawBufferPointer) throws -> Void) throws
    /// The batch rollup rows of `track` in `span` that hold a sketch: (bucket key, listener plays, sketch), any order.
    func batchListenerBuckets(_ subject: Subject, in span: RollupSpan, _ visit: (Int64, Int64, UnsafeRawBufferPointer) throws -> Void) throws
    /// The realtime rows of `track` in `gap` that hold a sketch: (hour, listener plays, sketch), any order.
    func realtimeListeners(_ subject: Subject, in gap: HourRange, _ visit: (Hour, Int64, UnsafeRawBufferPointer) throws -> Void) throws

    /// The latest hour holding a batch row with plays; nil when none does. The batch layer
    /// writes rows only in the hours it covers, so every such row counts by the merge rule.
    /// One index seek: the last entry of (hour, plays DESC, track_id) with plays.
    func latestBatchHour() throws -> Hour?
    /// The latest hour before `before` holding a realtime row with plays; nil when none does.
    /// One index seek on the (hour, track_id) key, backwards from `before`.
    func latestRealtimeHour(before: Hour) throws -> Hour?

    func recentRuns(limit: Int) throws -> [BatchRun]
    func partitions() throws -> [PartitionStatus]
    /// True when both layers answer a query (for readiness probes).
    func isReadable() -> Bool
}

extension LayerReads {
    public func trackSums(_ kind: SubjectKind, ids tracks: [Int64], batchParts: [RollupDecomposition],
                          realtimeGaps: [HourRange]) throws -> [TrackPlays] {
        try tracks.map { try sumsOneLayerAtATime(Subject(kind, $0), batchParts: batchParts, realtimeGaps: realtimeGaps) }
    }

    public func trackDimensions(_ subject: Subject, batchParts: [RollupDecomposition], realtimeGaps: [HourRange],
                                _ visit: (UnsafeRawBufferPointer) throws -> Void) throws -> TrackPlays {
        try dimensionsOneLayerAtATime(subject, batchParts: batchParts, realtimeGaps: realtimeGaps, visit)
    }

    /// `trackDimensions` as `trackSums`, one `batchDimensions` per part and one `realtimeDimensions`.
    func dimensionsOneLayerAtATime(_ subject: Subject, batchParts: [RollupDecomposition], realtimeGaps: [HourRange],
                                   _ visit: (UnsafeRawBufferPointer) throws -> Void) throws -> TrackPlays {
        let plays = try trackSums(subject.kind, ids: [subject.id], batchParts: batchParts, realtimeGaps: realtimeGaps)[0]
        for part in batchParts {
            try batchDimensions(subject, over: part, visit)
        }
        if !realtimeGaps.isEmpty {
            try realtimeDimensions(subject, over: realtimeGaps, visit)
        }
        return plays
    }

    /// `trackSums` as one `batchSum` per part and one `realtimeSum`.
    func sumsOneLayerAtATime(_ subject: Subject, batchParts: [RollupDecomposition], realtimeGaps: [HourRange]) throws -> TrackPlays {
        var batchPlays: Int64 = 0
        for part in batchParts {
            batchPlays += try batchSum(subject, over: part)
        }
        return TrackPlays(id: subject.id, batchPlays: batchPlays, realtimePlays: try realtimeSum(subject, over: realtimeGaps))
    }
}
