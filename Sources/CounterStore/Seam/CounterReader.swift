import CounterpointCore

/// Answers count queries by the merge rule (docs/architecture.md) over any backend's `LayerReads`:
/// `plays(track, hour) = batch(track, hour)` if `hour` is covered (0 without a batch row,
/// whatever the realtime layer says), else `realtime(track, hour)`. Where to read what is
/// worked out by `MergePlan` (pure, in the domain module); this type only runs the plan.
///
/// Each answer reads one snapshot of each layer. Snapshots may also be held across answers
/// (`holdSnapshots()`), which saves taking them per request. Not `Sendable`: give each server
/// thread its own reader.
public final class CounterReader {
    let layers: any LayerReads

    /// The freshness of the snapshots the latest count query (`plays`, `timeline`, `top`)
    /// read its counts from — so it describes exactly those counts. Before the first count
    /// query it is `freshness()` at opening time.
    public private(set) var lastFreshness: Freshness

    public init(layers: any LayerReads) throws {
        self.layers = layers
        lastFreshness = Freshness(batchCoveredUntil: nil, realtimeFlushedAt: nil, realtimeLagEvents: nil)
        lastFreshness = try freshness()
    }

    // MARK: Snapshots

    /// When the held snapshots were opened; `nil` when none are held.
    public private(set) var snapshotsHeldSince: ContinuousClock.Instant?
    private var heldState: SnapshotState?
    /// The realtime window rankings read, one per subject kind and signal, kept up to date from
    /// snapshot to snapshot.
    private var windows = SubjectKind.allCases.map { kind in Signal.allCases.map { RealtimeWindowCache(kind, signal: $0) } }
    /// The last merge plan worked out, and what it was worked out from (see `plan`).
    private var lastPlan: (coarsest: RollupLevel, coverage: Coverage, plan: MergePlan)?

    /// Keeps one snapshot of each layer open, so that the queries that follow — across
    /// requests — read them without taking new ones each time. The answers are then as of the
    /// moment the snapshots were taken; the caller bounds that age and must call
    /// `releaseSnapshots()` soon after, also when idle: a held snapshot keeps SQLite's
    /// checkpoint from recycling the write-ahead log past it.
    public func holdSnapshots() throws {
        guard snapshotsHeldSince == nil else { return }
        try renewSnapshots()
    }

    /// Replaces the held snapshots (if any) with new ones, as `releaseSnapshots()` then
    /// `holdSnapshots()` would, in fewer steps where the store allows.
    public func renewSnapshots() throws {
        snapshotsHeldSince = nil
        heldState = nil
        heldState = try layers.beginSnapshots()
        snapshotsHeldSince = .now
    }

    /// Ends the snapshots `holdSnapshots()` opened (after an error too: the next query starts afresh).
    public func releaseSnapshots() {
        layers.endSnapshots()
        snapshotsHeldSince = nil
        heldState = nil
    }

    /// Runs `body` inside one snapshot of each layer — the held ones, or fresh ones for this
    /// answer alone — and records their freshness.
    func withSnapshot<T>(_ body: (SnapshotState) throws -> T) throws -> T {
        if let heldState {
            lastFreshness = heldState.freshness
            return try body(heldState)
        }
        let state = try layers.beginSnapshots()
        defer { layers.endSnapshots() }
        lastFreshness = state.freshness
        return try body(state)
    }

    /// The merge plan of `range` under `state`'s coverage. Consecutive queries of a dashboard ask
    /// for the same range on the same coverage (the held snapshots change it only when a batch
    /// commits), so the last plan is kept and reused while both are unchanged: working one out
    /// allocates its arrays, which a point lookup would otherwise pay every time.
    func plan(_ range: HourRange, _ state: SnapshotState, coarsest: RollupLevel = .month) -> MergePlan {
        if let last = lastPlan, last.plan.range == range, last.coarsest == coarsest, last.coverage == state.coverage {
            return last.plan
        }
        let plan = MergePlan(range: range, coverage: state.coverage, coarsest: coarsest)
        lastPlan = (coarsest, state.coverage, plan)
        return plan
    }

    // MARK: Totals

    /// Merged plays of `subject` over `range`.
    public func plays(_ subject: Subject, in range: HourRange) throws -> TrackPlays {
        try withSnapshot { state in
            try plays(subject, plan: plan(range, state))
        }
    }

    /// Merged plays of each of `ids`, subjects of `kind`, over `range`, in request order
    /// (duplicates allowed).
    public func plays(_ kind: SubjectKind = .track, ids: [Int64], in range: HourRange) throws -> [TrackPlays] {
        guard !ids.isEmpty else { return [] }
        return try withSnapshot { state in
            try plays(kind, ids: ids, plan: plan(range, state))
        }
    }

    /// `plays(_:in:)` of a track.
    public func plays(track: Int64, in range: HourRange) throws -> TrackPlays { try plays(.track(track), in: range) }

    /// `plays(_:ids:in:)` of tracks.
    public func plays(tracks: [Int64], in range: HourRange) throws -> [TrackPlays] { try plays(.track, ids: tracks, in: range) }

    func plays(_ subject: Subject, plan: MergePlan) throws -> TrackPlays {
        try plays(subject.kind, ids: [subject.id], plan: plan)[0]
    }

    func plays(_ kind: SubjectKind, ids: [Int64], plan: MergePlan) throws -> [TrackPlays] {
        try layers.trackSums(kind, ids: ids, batchParts: plan.batchParts, realtimeGaps: plan.realtimeGaps)
    }

    /// Every signal's merged total of `subject` over `range`, with each layer's part (SPEC §11).
    public func counts(_ subject: Subject, in range: HourRange) throws -> MergedCounts {
        try withSnapshot { state in
            let plan = plan(range, state)
            var batch = SignalCounts()
            for part in plan.batchParts { batch.add(try layers.batchCounts(subject, over: part)) }
            return MergedCounts(batch: batch, realtime: try layers.realtimeCounts(subject, over: plan.realtimeGaps))
        }
    }

    /// `counts(_:in:)` of a track.
    public func counts(track: Int64, in range: HourRange) throws -> MergedCounts { try counts(.track(track), in: range) }

    // MARK: Timeline

    /// Every bucket of `range`, zero-filled, of `signal`'s net count. A day bucket sums the merged
    /// hours of the day that lie in `range` and starts at the day's first hour. The caller bounds
    /// the bucket count.
    public func timeline(_ subject: Subject, in range: HourRange, step: TimelineStep, signal: Signal = .plays) throws -> [TimelinePoint] {
        guard !range.isEmpty else { return [] }
        let buckets = TimelineBuckets(range: range, step: step)
        return try withSnapshot { state in
            let plan = self.plan(range, state, coarsest: step == .day ? .day : .hour)
            var counts = [Int64](repeating: 0, count: buckets.count)
            for span in plan.batchSpans {
                try layers.batchBuckets(subject, in: span, signal: signal) { key, count in
                    counts[buckets.index(of: span.level.firstHour(ofKey: key))] &+= count
                }
            }
            for gap in plan.realtimeGaps {
                try layers.realtimeHours(subject, in: gap, signal: signal) { hour, count in
                    counts[buckets.index(of: hour)] &+= count
                }
            }
            let sources = buckets.sources(state.coverage)
            return (0..<buckets.count).map { index in
                TimelinePoint(start: buckets.start(index), count: counts[index], source: sources[index])
            }
        }
    }

    /// `timeline(_:in:step:signal:)` of a track.
    public func timeline(track: Int64, in range: HourRange, step: TimelineStep, signal: Signal = .plays) throws -> [TimelinePoint] {
        try timeline(.track(track), in: range, step: step, signal: signal)
    }

    // MARK: Ranking

    /// The `limit` tracks with the most merged plays (or net count of `signal`) over `range`, most
    /// first, ties by track id ascending; tracks whose count is not positive are left out. Exact
    /// and as fresh as the snapshot. For another signal than plays, each answer's `plays`,
    /// `batchPlays` and `realtimePlays` hold that signal's counts.
    ///
    /// Every rollup bucket of the plan's batch spans is one ranked list (sorted access through
    /// its (bucket, plays DESC, track_id) index, each chunk seeking from the last entry read), and the realtime window — summed per track in memory,
    /// since it holds only what is not batched yet — one more; `ThresholdTopK` merges them and
    /// stops as soon as no unseen track can enter the ranking. Its cost follows the depth it
    /// reads and the buckets of the range (a few dozen for a year), not the rows of the range.
    public func top(_ kind: SubjectKind = .track, in range: HourRange, limit: Int, signal: Signal = .plays) throws -> [TrackPlays] {
        guard limit > 0, !range.isEmpty else { return [] }
        return try withSnapshot { state in
            let plan = self.plan(range, state)
            let window = try windows[kind.rawValue][signal.ordinal].window(plan.realtimeGaps, state: state, layers: layers)
            let realtimeTotals = window.totals
            var lists: [RankedList] = []
            for span in plan.batchSpans {
                for key in span.lower..<span.upper {
                    let level = span.level
                    lists.append(RankedList { [layers] (after: RankedEntry?, limit: Int) in
                        try layers.batchRanked(kind, level: level, key: key, signal: signal, after: after, limit: limit)
                    })
                }
            }
            if !window.ranked.isEmpty {
                lists.append(.inMemory(window.ranked))
            }
            return try ThresholdTopK.top(limit: limit, lists: &lists) { id in
                let subject = Subject(kind, id)
                var batchPlays: Int64 = 0
                for part in plan.batchParts {
                    batchPlays += signal == .plays
                        ? try layers.batchSum(subject, over: part) : try layers.batchCounts(subject, over: part)[signal]
                }
                return TrackPlays(id: id, batchPlays: batchPlays, realtimePlays: realtimeTotals.plays(of: id))
            }
        }
    }

    // MARK: Status

    /// How current the counts are, from fresh snapshots (or the held ones).
    public func freshness() throws -> Freshness {
        try withSnapshot { $0.freshness }
    }

    public func coverage() throws -> Coverage {
        try withSnapshot { $0.coverage }
    }

    /// The latest batch runs, newest first.
    public func recentRuns(limit: Int) throws -> [BatchRun] {
        try layers.recentRuns(limit: limit)
    }

    /// The realtime layer's position in every partition it has consumed, by topic and partition.
    public func partitions() throws -> [PartitionStatus] {
        try layers.partitions()
    }

    /// What `/v1/status` shows of the stores, read from one snapshot of each layer (the held
    /// ones, or fresh ones for this answer alone), so its parts agree: the coverage is the one
    /// the latest run left, and "covered until" and "fresh as of" describe the same moment.
    public func status(recentRuns limit: Int) throws -> StoreStatus {
        try withSnapshot { state in
            StoreStatus(coverage: state.coverage, freshness: state.freshness,
                        recentRuns: try layers.recentRuns(limit: limit), partitions: try layers.partitions(),
                        latestCounts: try latestCounts(state))
        }
    }

    /// The latest hour holding merged plays, from fresh snapshots (or the held ones); nil when
    /// the store holds none.
    public func latestCounts() throws -> LatestCounts? {
        try withSnapshot { try latestCounts($0) }
    }

    /// By the merge rule: every batch row lies in a covered hour and counts; a realtime row
    /// counts only outside the coverage. So the latest realtime hour is looked up again below
    /// each covered range it falls in — one index seek per range at most, and usually one in
    /// all, since compaction deletes the realtime rows of covered hours.
    func latestCounts(_ state: SnapshotState) throws -> LatestCounts? {
        let batch = try layers.latestBatchHour()
        var before = Hour(index: .max)
        while let hour = try layers.latestRealtimeHour(before: before), batch.map({ hour > $0 }) ?? true {
            guard let covering = state.coverage.ranges.last(where: { $0.lower <= hour }), covering.contains(hour) else {
                return LatestCounts(hour: hour, source: .realtime)
            }
            before = covering.lower
        }
        return batch.map { LatestCounts(hour: $0, source: .batch) }
    }

    /// True when both stores answer a query (for readiness probes).
    public func isReadable() -> Bool {
        layers.isReadable()
    }
}

@available(*, unavailable)
extension CounterReader: Sendable {}
