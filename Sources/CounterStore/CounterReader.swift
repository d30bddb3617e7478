import CounterpointCore
import SQLiteDB

/// Answers count queries by applying the merge rule (SPEC §2) to the two stores:
/// `plays(track, hour) = batch(track, hour)` if `hour` is covered (0 without a batch row,
/// whatever the realtime layer says), else `realtime(track, hour)`.
///
/// Each reader holds its own read-only connections and cached statements: give each server
/// thread its own reader. Not `Sendable`.
///
/// Consistency: coverage and batch rows are always read from one snapshot of batch.sqlite
/// (one statement, or one read transaction), so a batch run committing meanwhile is seen
/// entirely or not at all; realtime rows come from one snapshot of realtime.sqlite.
///
/// Batch rows exist only in covered hours (`BatchStore.replace` writes rows inside the range
/// it marks covered, and coverage never shrinks), so batch plays are summed over the whole
/// range, and realtime plays over the uncovered gaps of the range only.
public final class CounterReader {
    private let batch: Database
    private let realtime: Database

    /// The freshness of the snapshots that the latest count query (`plays`, `timeline`, `top`)
    /// read its counts from — so it describes exactly those counts, and costs no extra query.
    /// Before the first count query it is `freshness()` at opening time.
    public private(set) var lastFreshness: Freshness

    /// Opens both files read-only; a missing file is first created (empty, with its schema),
    /// so the reader can start before any flush or batch run.
    public init(location: StoreLocation, configuration: DatabaseConfiguration = .default) throws {
        try StoreFile.createDirectory(location.directory)
        batch = try StoreFile.openReader(path: location.batchPath, schema: .batch, configuration: configuration)
        realtime = try StoreFile.openReader(path: location.realtimePath, schema: .realtime, configuration: configuration)
        lastFreshness = Freshness(batchCoveredUntil: nil, realtimeFlushedAt: nil, realtimeLagEvents: nil)
        lastFreshness = try freshness()
    }

    // MARK: Snapshot reuse

    /// When the held snapshots were opened; `nil` when none are held.
    public private(set) var snapshotsHeldSince: ContinuousClock.Instant?

    /// Keeps one read transaction open on each store file, so that the queries that follow —
    /// across requests — read those snapshots without taking SQLite's WAL read locks (a few
    /// `fcntl` calls per statement) each time. The answers are then as of the moment the
    /// snapshots were taken; the caller bounds that age and must call `releaseSnapshots()`
    /// soon after, also when idle: a held snapshot keeps the writer's checkpoint from
    /// recycling the write-ahead log past it.
    public func holdSnapshots() throws {
        guard snapshotsHeldSince == nil else { return }
        try batch.beginRead()
        do { try realtime.beginRead() } catch { batch.endRead(); throw error }
        snapshotsHeldSince = .now
    }

    /// Ends the snapshots `holdSnapshots()` opened (after an error too: the next query starts afresh).
    public func releaseSnapshots() {
        batch.endRead()
        realtime.endRead()
        snapshotsHeldSince = nil
        heldState = nil
    }

    /// What cannot change within held snapshots — coverage and the realtime freshness — read
    /// once per snapshot instead of once per query.
    private var heldState: (coverage: Coverage, realtimeFlushedAt: Int64?, realtimeLagEvents: Int64?)?

    private func heldSnapshotState() throws -> (coverage: Coverage, realtimeFlushedAt: Int64?, realtimeLagEvents: Int64?) {
        if let heldState { return heldState }
        let coverage = try CoverageTable.load(batch)
        let statement = try realtime.cachedStatement(RealtimeSQL.sumAndState[0])
        defer { statement.reset() }
        try statement.step()
        let state = (coverage, statement.optionalInt64(at: 1), statement.optionalInt64(at: 2))
        heldState = state
        return state
    }

    // MARK: Totals

    /// Merged plays of `track` over `range`.
    public func plays(track: Int64, in range: HourRange) throws -> TrackPlays {
        if snapshotsHeldSince != nil {
            // Inside held snapshots, coverage and freshness are known: two plain index range sums.
            let state = try heldSnapshotState()
            let batchPlays = try rangeSum(batch, RangeSumSQL.batch, track: track, range: range)
            var realtimePlays: Int64 = 0
            for gap in state.coverage.uncovered(within: range) {
                realtimePlays += try rangeSum(realtime, RangeSumSQL.realtime, track: track, range: gap)
            }
            lastFreshness = Freshness(batchCoveredUntil: state.coverage.coveredUntil,
                                      realtimeFlushedAt: state.realtimeFlushedAt, realtimeLagEvents: state.realtimeLagEvents)
            return TrackPlays(trackID: track, batchPlays: batchPlays, realtimePlays: realtimePlays)
        }
        // One statement reads coverage and the batch sum, hence one snapshot, and costs a
        // single step/reset rather than BEGIN, two queries and COMMIT.
        let snapshot = try batch.cachedStatement("""
            SELECT lower, upper FROM coverage
            UNION ALL
            SELECT NULL, coalesce(sum(plays), 0) FROM batch_counts WHERE track_id = ?1 AND hour >= ?2 AND hour < ?3
            """)
        try snapshot.bind(track, at: 1)
        try snapshot.bind(range.lower.index, at: 2)
        try snapshot.bind(range.upper.index, at: 3)
        var coveredRanges: [HourRange] = []
        var batchPlays: Int64 = 0
        try snapshot.forEachRow { row in
            if row.isNull(at: 0) {
                batchPlays = row.int64(at: 1)
            } else {
                coveredRanges.append(HourRange(Hour(index: row.int64(at: 0)), Hour(index: row.int64(at: 1))))
            }
        }
        let coverage = Coverage(coveredRanges)
        let realtimePlays = try realtimeSumAndState(track: track, gaps: coverage.uncovered(within: range), coverage: coverage)
        return TrackPlays(trackID: track, batchPlays: batchPlays, realtimePlays: realtimePlays)
    }

    /// Merged plays of each of `tracks` over `range`, in request order (duplicates allowed).
    public func plays(tracks: [Int64], in range: HourRange) throws -> [TrackPlays] {
        guard !tracks.isEmpty else { return [] }
        let (coverage, batchPlays) = try batch.read { db in
            let coverage = try CoverageTable.load(db)
            let sum = try db.cachedStatement(
                "SELECT coalesce(sum(plays), 0) FROM batch_counts WHERE track_id = ?1 AND hour >= ?2 AND hour < ?3")
            try sum.bind(range.lower.index, at: 2)
            try sum.bind(range.upper.index, at: 3)
            let plays = try tracks.map { track in
                try sum.bind(track, at: 1)
                return try sum.singleInt64() ?? 0
            }
            return (coverage, plays)
        }
        let gaps = coverage.uncovered(within: range)
        let realtimePlays = try realtime.read { db in
            try recordFreshness(coverage: coverage, db)
            return try tracks.map { track in
                try gaps.reduce(0) { total, gap in total + (try realtimeSum(track: track, gap: gap)) }
            }
        }
        return tracks.indices.map { index in
            TrackPlays(trackID: tracks[index], batchPlays: batchPlays[index], realtimePlays: realtimePlays[index])
        }
    }

    /// Σ realtime plays of `track` over `gaps`, and the realtime freshness, from one snapshot of
    /// realtime.sqlite. The usual shapes (coverage is one block, so at most two gaps) take one
    /// statement; others a read transaction.
    private func realtimeSumAndState(track: Int64, gaps: [HourRange], coverage: Coverage) throws -> Int64 {
        guard gaps.count <= 2 else {
            return try realtime.read { db in
                try recordFreshness(coverage: coverage, db)
                return try gaps.reduce(0) { total, gap in total + (try realtimeSum(track: track, gap: gap)) }
            }
        }
        let statement = try realtime.cachedStatement(RealtimeSQL.sumAndState[gaps.count])
        if !gaps.isEmpty { try statement.bind(track, at: 1) }
        for (index, gap) in gaps.enumerated() {
            try statement.bind(gap.lower.index, at: 2 * index + 2)
            try statement.bind(gap.upper.index, at: 2 * index + 3)
        }
        defer { statement.reset() }
        try statement.step()
        lastFreshness = Freshness(batchCoveredUntil: coverage.coveredUntil, realtimeFlushedAt: statement.optionalInt64(at: 1),
                                  realtimeLagEvents: statement.optionalInt64(at: 2))
        return statement.int64(at: 0)
    }

    /// Reads the realtime freshness (inside the caller's realtime snapshot) into `lastFreshness`.
    private func recordFreshness(coverage: Coverage, _ db: Database) throws {
        let statement = try db.cachedStatement(RealtimeSQL.sumAndState[0])
        defer { statement.reset() }
        try statement.step()
        lastFreshness = Freshness(batchCoveredUntil: coverage.coveredUntil, realtimeFlushedAt: statement.optionalInt64(at: 1),
                                  realtimeLagEvents: statement.optionalInt64(at: 2))
    }

    /// Σ plays of `track` over `range` in one counts table, through its (track_id, hour, plays) index.
    private func rangeSum(_ db: Database, _ sql: String, track: Int64, range: HourRange) throws -> Int64 {
        let sum = try db.cachedStatement(sql)
        try sum.bind(track, at: 1)
        try sum.bind(range.lower.index, at: 2)
        try sum.bind(range.upper.index, at: 3)
        return try sum.singleInt64() ?? 0
    }

    private func realtimeSum(track: Int64, gap: HourRange) throws -> Int64 {
        let sum = try realtime.cachedStatement(
            "SELECT coalesce(sum(plays), 0) FROM realtime_counts WHERE track_id = ?1 AND hour >= ?2 AND hour < ?3")
        try sum.bind(track, at: 1)
        try sum.bind(gap.lower.index, at: 2)
        try sum.bind(gap.upper.index, at: 3)
        return try sum.singleInt64() ?? 0
    }

    // MARK: Timeline

    /// Every bucket of `range`, zero-filled. A day bucket sums the merged hours of the day that
    /// lie in `range` and starts at the day's first hour. The caller bounds the bucket count.
    public func timeline(track: Int64, in range: HourRange, step: TimelineStep) throws -> [TimelinePoint] {
        guard !range.isEmpty else { return [] }
        let buckets = Buckets(range: range, step: step)
        var plays = [Int64](repeating: 0, count: buckets.count)

        let coverage = try batch.read { db in
            let coverage = try CoverageTable.load(db)
            let rows = try db.cachedStatement(
                "SELECT hour, plays FROM batch_counts WHERE track_id = ?1 AND hour >= ?2 AND hour < ?3")
            try rows.bind(track, at: 1)
            try rows.bind(range.lower.index, at: 2)
            try rows.bind(range.upper.index, at: 3)
            try rows.forEachRow { row in
                plays[buckets.index(of: row.int64(at: 0))] &+= row.int64(at: 1)
            }
            return coverage
        }

        let gaps = coverage.uncovered(within: range)
        try realtime.read { db in
            try recordFreshness(coverage: coverage, db)
            let rows = try db.cachedStatement(
                "SELECT hour, plays FROM realtime_counts WHERE track_id = ?1 AND hour >= ?2 AND hour < ?3")
            for gap in gaps {
                try rows.bind(track, at: 1)
                try rows.bind(gap.lower.index, at: 2)
                try rows.bind(gap.upper.index, at: 3)
                try rows.forEachRow { row in
                    plays[buckets.index(of: row.int64(at: 0))] &+= row.int64(at: 1)
                }
            }
        }

        let coveredHours = buckets.coveredHours(coverage.covered(within: range))
        return (0..<buckets.count).map { index in
            let covered = coveredHours[index]
            let source: CountSource = covered == 0 ? .realtime : covered == buckets.hoursInRange(index) ? .batch : .mixed
            return TimelinePoint(start: buckets.start(index), plays: plays[index], source: source)
        }
    }

    // MARK: Ranking

    /// The `limit` tracks with the most merged plays over `range`, most first, ties by track id
    /// ascending; tracks with 0 plays are left out.
    ///
    /// The one query that reads every track: its cost grows with the rows of the range (see
    /// `sumPerTrack`), from milliseconds for recent hours to seconds for all time on a store of
    /// tens of millions of rows.
    public func top(in range: HourRange, limit: Int) throws -> [TrackPlays] {
        guard limit > 0, !range.isEmpty else { return [] }
        var totals: [Int64: (batch: Int64, realtime: Int64)] = [:]
        let coverage = try batch.read { db in
            try sumPerTrack(CountsTable.batch, in: range, db) { track, plays in
                totals[track, default: (0, 0)].batch &+= plays
            }
            return try CoverageTable.load(db)
        }
        try realtime.read { db in
            try recordFreshness(coverage: coverage, db)
            for gap in coverage.uncovered(within: range) {
                try sumPerTrack(CountsTable.realtime, in: gap, db) { track, plays in
                    totals[track, default: (0, 0)].realtime &+= plays
                }
            }
        }
        var best = TopTracks(limit: limit)
        for (track, plays) in totals where plays.batch &+ plays.realtime > 0 {
            best.offer(TrackPlays(trackID: track, batchPlays: plays.batch, realtimePlays: plays.realtime))
        }
        return best.sorted()
    }

    /// Calls `add(track, plays)` with plays of `table` over `range`, several times per track.
    ///
    /// Two plans. When `range` spans a small part of the table's hours, read just its rows (the
    /// table is keyed by hour) and let the caller total them. Otherwise scan the per-track index
    /// once and total per track inside SQLite — one row per track instead of one per
    /// (track, hour): handing every row to a dictionary costs about three times as much per row
    /// as SQLite's own grouping, so the full scan wins from about a third of the hours on.
    private func sumPerTrack(_ table: CountsTable, in range: HourRange, _ db: Database,
                             _ add: (Int64, Int64) -> Void) throws {
        let extent = try db.cachedStatement(table.hourExtentSQL)
        defer { extent.reset() }
        guard try extent.step(), !extent.isNull(at: 0) else { return }
        let tableSpan = extent.int64(at: 1) + 1 - extent.int64(at: 0)
        let clamped = range.clamped(to: HourRange(Hour(index: extent.int64(at: 0)), Hour(index: extent.int64(at: 1) + 1)))
        extent.reset()
        guard !clamped.isEmpty else { return }

        let rows = try db.cachedStatement(clamped.count * 3 >= tableSpan ? table.groupedByTrackSQL : table.rowsByHourSQL)
        try rows.bind(clamped.lower.index, at: 1)
        try rows.bind(clamped.upper.index, at: 2)
        try rows.forEachRow { row in add(row.int64(at: 0), row.int64(at: 1)) }
    }

    // MARK: Status

    public func freshness() throws -> Freshness {
        let coveredUntil = try batch.cachedStatement("SELECT max(upper) FROM coverage").singleInt64()
        let realtimeState = try realtime.cachedStatement(RealtimeSQL.sumAndState[0])
        defer { realtimeState.reset() }
        try realtimeState.step()
        return Freshness(batchCoveredUntil: coveredUntil.map { Hour(index: $0) },
                         realtimeFlushedAt: realtimeState.optionalInt64(at: 1),
                         realtimeLagEvents: realtimeState.optionalInt64(at: 2))
    }

    public func coverage() throws -> Coverage {
        try batch.read { try CoverageTable.load($0) }
    }

    /// The latest batch runs, newest first.
    public func recentRuns(limit: Int) throws -> [BatchRun] {
        try batch.read { try BatchRunsTable.recent(limit: limit, $0) }
    }

    /// The realtime layer's position in every partition it has consumed, by topic and partition.
    public func partitions() throws -> [PartitionStatus] {
        var partitions: [PartitionStatus] = []
        try realtime.cachedStatement("""
            SELECT topic, partition, next_offset, high_watermark FROM partition_offsets ORDER BY topic, partition
            """).forEachRow { row in
            partitions.append(PartitionStatus(topic: row.string(at: 0), partition: Int32(truncatingIfNeeded: row.int64(at: 1)),
                                              nextOffset: row.int64(at: 2), highWatermark: row.optionalInt64(at: 3)))
        }
        return partitions
    }

    /// True when both stores answer a query (for readiness probes).
    public func isReadable() -> Bool {
        do {
            _ = try batch.cachedStatement("SELECT count(*) FROM coverage").singleInt64()
            _ = try realtime.cachedStatement("SELECT count(*) FROM last_flush").singleInt64()
            return true
        } catch {
            return false
        }
    }
}

@available(*, unavailable)
extension CounterReader: Sendable {}

/// The two counts tables, which have the same layout, and the statements `top` runs on them.
private struct CountsTable {
    let hourExtentSQL: String
    let rowsByHourSQL: String
    let groupedByTrackSQL: String

    init(table: String, byTrackIndex: String) {
        // Two subqueries: SQLite answers a lone min() or max() from the key in one seek, but
        // scans the table for "SELECT min(hour), max(hour)".
        hourExtentSQL = "SELECT (SELECT min(hour) FROM \(table)), (SELECT max(hour) FROM \(table))"
        rowsByHourSQL = "SELECT track_id, plays FROM \(table) WHERE hour >= ?1 AND hour < ?2"
        groupedByTrackSQL = """
            SELECT track_id, sum(plays) FROM \(table) INDEXED BY \(byTrackIndex)
            WHERE hour >= ?1 AND hour < ?2 GROUP BY track_id
            """
    }

    static let batch = CountsTable(table: "batch_counts", byTrackIndex: "batch_counts_by_track")
    static let realtime = CountsTable(table: "realtime_counts", byTrackIndex: "realtime_counts_by_track")
}

/// Statements on realtime.sqlite shared by several queries.
private enum RangeSumSQL {
    static let batch = "SELECT coalesce(sum(plays), 0) FROM batch_counts WHERE track_id = ?1 AND hour >= ?2 AND hour < ?3"
    static let realtime = "SELECT coalesce(sum(plays), 0) FROM realtime_counts WHERE track_id = ?1 AND hour >= ?2 AND hour < ?3"
}

private enum RealtimeSQL {
    /// `sumAndState[n]`: Σ plays of track ?1 over n gaps [?2, ?3), [?4, ?5), then the last flush
    /// time and the lag — counts and freshness from one snapshot in one statement.
    static let sumAndState: [String] = (0...2).map { gaps in
        let sums = (0..<gaps).map { gap in
            "(SELECT coalesce(sum(plays), 0) FROM realtime_counts WHERE track_id = ?1 AND hour >= ?\(2 * gap + 2) AND hour < ?\(2 * gap + 3))"
        }
        return """
            SELECT \(sums.isEmpty ? "0" : sums.joined(separator: " + ")),
                   (SELECT flushed_at FROM last_flush WHERE id = 1),
                   (SELECT sum(max(high_watermark - next_offset, 0)) FROM partition_offsets WHERE high_watermark IS NOT NULL)
            """
    }
}

/// The buckets of a timeline: bucket `i` starts at `firstStart + i·step` and counts the hours
/// of the range inside it.
private struct Buckets {
    let range: HourRange
    let width: Int64
    let firstStart: Int64
    let count: Int

    init(range: HourRange, step: TimelineStep) {
        self.range = range
        width = step.hours
        firstStart = step.bucketStart(of: range.lower).index
        count = Int((range.upper.index - 1 - firstStart) / width) + 1
    }

    func index(of hour: Int64) -> Int { Int((hour - firstStart) / width) }

    func start(_ index: Int) -> Hour { Hour(index: firstStart + Int64(index) * width) }

    func hoursInRange(_ index: Int) -> Int64 {
        let lower = firstStart + Int64(index) * width
        return min(lower + width, range.upper.index) - max(lower, range.lower.index)
    }

    /// Covered hours per bucket, from the covered parts of the range.
    func coveredHours(_ parts: [HourRange]) -> [Int64] {
        var hours = [Int64](repeating: 0, count: count)
        for part in parts {
            var cursor = part.lower.index
            while cursor < part.upper.index {
                let bucket = index(of: cursor)
                let bucketEnd = firstStart + Int64(bucket + 1) * width
                let end = min(bucketEnd, part.upper.index)
                hours[bucket] += end - cursor
                cursor = end
            }
        }
        return hours
    }
}

/// The best `limit` tracks seen so far: a min-heap whose root is the weakest kept track.
private struct TopTracks {
    let limit: Int
    private var heap: [TrackPlays] = []

    init(limit: Int) { self.limit = limit }

    /// Ranks `a` below `b`: fewer plays, or as many plays and a higher track id.
    private static func ranksBelow(_ a: TrackPlays, _ b: TrackPlays) -> Bool {
        a.plays != b.plays ? a.plays < b.plays : a.trackID > b.trackID
    }

    mutating func offer(_ candidate: TrackPlays) {
        if heap.count < limit {
            heap.append(candidate)
            siftUp(heap.count - 1)
        } else if Self.ranksBelow(heap[0], candidate) {
            heap[0] = candidate
            siftDown(0)
        }
    }

    func sorted() -> [TrackPlays] {
        heap.sorted { Self.ranksBelow($1, $0) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.ranksBelow(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var weakest = parent
            for child in [2 * parent + 1, 2 * parent + 2] where child < heap.count && Self.ranksBelow(heap[child], heap[weakest]) {
                weakest = child
            }
            guard weakest != parent else { return }
            heap.swapAt(parent, weakest)
            parent = weakest
        }
    }
}
