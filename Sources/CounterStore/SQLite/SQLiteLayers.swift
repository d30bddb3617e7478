import CounterpointCore
import SQLiteDB

/// `LayerReads` on the SQLite files: one read-only connection to each, with their prepared
/// statements. Not `Sendable`: one per server thread (SQLite connections are used by one
/// thread at a time).
public final class SQLiteLayers: LayerReads {
    private let batch: Database
    private let realtime: Database
    /// Whether every change the realtime snapshot shows stamped its hours (`RealtimeHourStamps`).
    private var stampsTrusted = false

    /// Opens both files read-only; a missing file is first created (empty, with its schema),
    /// so the reader can start before any flush or batch run.
    public init(location: StoreLocation, configuration: DatabaseConfiguration = .default) throws {
        try StoreFile.createDirectory(location.directory)
        batch = try StoreFile.openReader(path: location.batchPath, schema: .batch, configuration: configuration)
        realtime = try StoreFile.openReader(path: location.realtimePath, schema: .realtime, configuration: configuration)
    }

    // MARK: Snapshots

    public func beginSnapshots() throws -> SnapshotState {
        // Realtime first (see `LayerReads`); a WAL read transaction takes its snapshot at its
        // first read, so each BEGIN is followed at once by that layer's state.
        endSnapshots()
        try realtime.beginRead()
        do {
            let state = try realtime.cachedStatement("""
                SELECT (SELECT flushed_at FROM last_flush WHERE id = 1),
                       (SELECT sum(max(high_watermark - next_offset, 0)) FROM partition_offsets WHERE high_watermark IS NOT NULL),
                       (SELECT changes FROM last_flush WHERE id = 1),
                       (SELECT stamped FROM last_flush WHERE id = 1)
                """)
            defer { state.reset() }
            try state.step()
            let flushedAt = state.optionalInt64(at: 0)
            let lag = state.optionalInt64(at: 1)
            // One writer per file, and it counts each change it commits; the flush time too, so
            // that a writer of an older version (which counts nothing) still changes it.
            let version = "\(state.optionalInt64(at: 2) ?? 0):\(flushedAt ?? 0)"
            stampsTrusted = state.optionalInt64(at: 2) == state.optionalInt64(at: 3)
            try batch.beginRead()
            let coverage = try BatchRecords.coverage(SQLiteDialect(batch))
            return SnapshotState(coverage: coverage, realtimeFlushedAt: flushedAt, realtimeLagEvents: lag, realtimeVersion: version)
        } catch {
            endSnapshots()
            throw error
        }
    }

    public func endSnapshots() {
        batch.endRead()
        realtime.endRead()
    }

    // MARK: Batch layer

    public func batchSum(_ subject: Subject, over part: RollupDecomposition) throws -> Int64 {
        // One statement over the non-empty spans: a point lookup is one step, whatever the range.
        let (mask, spans) = Catalogue.nonEmptySlots(of: part)
        guard mask != 0 else { return 0 }
        let sum = try batch.cachedStatement(Self.batchSQL[subject.kind.rawValue].sumBySlots[mask])
        try sum.bind(subject.id, at: 1)
        for (index, span) in spans.enumerated() {
            try sum.bind(span.lower, at: 2 * index + 2)
            try sum.bind(span.upper, at: 2 * index + 3)
        }
        return try sum.singleInt64() ?? 0
    }

    public func batchCounts(_ subject: Subject, over part: RollupDecomposition) throws -> SignalCounts {
        let (mask, spans) = Catalogue.nonEmptySlots(of: part)
        guard mask != 0 else { return .zero }
        let rows = try batch.cachedStatement(Self.batchSQL[subject.kind.rawValue].countsBySlots[mask])
        try rows.bind(subject.id, at: 1)
        for (index, span) in spans.enumerated() {
            try rows.bind(span.lower, at: 2 * index + 2)
            try rows.bind(span.upper, at: 2 * index + 3)
        }
        var counts = SignalCounts()
        try rows.forEachRow { counts.add($0.signalCounts(from: 0)) }
        return counts
    }

    public func batchBuckets(_ subject: Subject, in span: RollupSpan, signal: Signal, _ visit: (Int64, Int64) -> Void) throws {
        let rows = try batch.cachedStatement(Self.batchSQL[subject.kind.rawValue].buckets[signal.ordinal][span.level.rawValue])
        try rows.bind(subject.id, at: 1)
        try rows.bind(span.lower, at: 2)
        try rows.bind(span.upper, at: 3)
        try rows.forEachRow { visit($0.int64(at: 0), $0.int64(at: 1)) }
    }

    public func batchRanked(_ kind: SubjectKind, level: RollupLevel, key: Int64, signal: Signal, after: RankedEntry?,
                            limit: Int) throws -> [RankedEntry] {
        let rows: Statement
        if let after {
            rows = try batch.cachedStatement(Self.batchSQL[kind.rawValue].rankedAfter[signal.ordinal][level.rawValue])
            try rows.bind(key, at: 1)
            try rows.bind(after.plays, at: 2)
            try rows.bind(after.id, at: 3)
            try rows.bind(Int64(limit), at: 4)
        } else {
            rows = try batch.cachedStatement(Self.batchSQL[kind.rawValue].ranked[signal.ordinal][level.rawValue])
            try rows.bind(key, at: 1)
            try rows.bind(Int64(limit), at: 2)
        }
        var entries: [RankedEntry] = []
        entries.reserveCapacity(limit)
        try rows.forEachRow { entries.append(RankedEntry(id: $0.int64(at: 0), plays: $0.int64(at: 1))) }
        return entries
    }

    // MARK: Realtime layer

    public func realtimeSum(_ subject: Subject, over gaps: [HourRange]) throws -> Int64 {
        guard !gaps.isEmpty else { return 0 }
        let sums = Self.realtimeSums[subject.kind.rawValue]
        let sum = try realtime.cachedStatement(gaps.count < sums.count ? sums[gaps.count] : Self.realtimeSum(subject.kind, gaps: gaps.count))
        try sum.bind(subject.id, at: 1)
        for (index, gap) in gaps.enumerated() {
            try sum.bind(gap.lower.index, at: 2 * index + 2)
            try sum.bind(gap.upper.index, at: 2 * index + 3)
        }
        return try sum.singleInt64() ?? 0
    }

    public func realtimeCounts(_ subject: Subject, over gaps: [HourRange]) throws -> SignalCounts {
        var counts = SignalCounts()
        for gap in gaps {
            let rows = try realtime.cachedStatement(Self.realtimeSQL[subject.kind.rawValue].counts)
            try rows.bind(subject.id, at: 1)
            try rows.bind(gap.lower.index, at: 2)
            try rows.bind(gap.upper.index, at: 3)
            try rows.forEachRow { counts.add($0.signalCounts(from: 0)) }
        }
        return counts
    }

    public func realtimeHours(_ subject: Subject, in gap: HourRange, signal: Signal, _ visit: (Hour, Int64) -> Void) throws {
        let rows = try realtime.cachedStatement(Self.realtimeSQL[subject.kind.rawValue].hours[signal.ordinal])
        try rows.bind(subject.id, at: 1)
        try rows.bind(gap.lower.index, at: 2)
        try rows.bind(gap.upper.index, at: 3)
        try rows.forEachRow { visit(Hour(index: $0.int64(at: 0)), $0.int64(at: 1)) }
    }

    public func realtimeRows(_ kind: SubjectKind, in gap: HourRange, signal: Signal, _ visit: (Int64, Int64) -> Void) throws {
        let rows = try realtime.cachedStatement(Self.realtimeSQL[kind.rawValue].rowsInWindow[signal.ordinal])
        try rows.bind(gap.lower.index, at: 1)
        try rows.bind(gap.upper.index, at: 2)
        try rows.forEachRow { visit($0.int64(at: 0), $0.int64(at: 1)) }
    }

    public func realtimeHourStamps(in gap: HourRange) throws -> [(hour: Int64, stamp: Int64)]? {
        guard stampsTrusted else { return nil }
        let rows = try realtime.cachedStatement("SELECT hour, changes FROM realtime_hours WHERE hour >= ?1 AND hour < ?2 ORDER BY hour")
        try rows.bind(gap.lower.index, at: 1)
        try rows.bind(gap.upper.index, at: 2)
        var stamps: [(hour: Int64, stamp: Int64)] = []
        try rows.forEachRow { stamps.append(($0.int64(at: 0), $0.int64(at: 1))) }
        return stamps
    }

    // MARK: Dimensions

    public func batchDimensions(_ subject: Subject, over part: RollupDecomposition, _ visit: (UnsafeRawBufferPointer) throws -> Void) throws {
        // In process, a statement per span costs nothing more than one over them all.
        for span in part.spans {
            let rows = try batch.cachedStatement(Self.batchSQL[subject.kind.rawValue].dimensions[span.level.rawValue])
            try rows.bind(subject.id, at: 1)
            try rows.bind(span.lower, at: 2)
            try rows.bind(span.upper, at: 3)
            try rows.forEachRow { try $0.withBytes(at: 0, visit) }
        }
    }

    public func realtimeDimensions(_ subject: Subject, over gaps: [HourRange], _ visit: (UnsafeRawBufferPointer) throws -> Void) throws {
        for gap in gaps {
            let rows = try realtime.cachedStatement(Self.realtimeSQL[subject.kind.rawValue].dimensions)
            try rows.bind(subject.id, at: 1)
            try rows.bind(gap.lower.index, at: 2)
            try rows.bind(gap.upper.index, at: 3)
            try rows.forEachRow { try $0.withBytes(at: 0, visit) }
        }
    }

    // MARK: Listeners

    public func batchListeners(_ subject: Subject, over part: RollupDecomposition, _ visit: (Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        for span in part.spans {
            try batchListenerBuckets(subject, in: span) { _, plays, sketch in try visit(plays, sketch) }
        }
    }

    public func batchListenerBuckets(_ subject: Subject, in span: RollupSpan,
                                     _ visit: (Int64, Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        let rows = try batch.cachedStatement(Self.batchSQL[subject.kind.rawValue].listeners[span.level.rawValue])
        try rows.bind(subject.id, at: 1)
        try rows.bind(span.lower, at: 2)
        try rows.bind(span.upper, at: 3)
        try rows.forEachRow { row in try row.withBytes(at: 2) { try visit(row.int64(at: 0), row.int64(at: 1), $0) } }
    }

    public func realtimeListeners(_ subject: Subject, in gap: HourRange, _ visit: (Hour, Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        let rows = try realtime.cachedStatement(Self.realtimeSQL[subject.kind.rawValue].listeners)
        try rows.bind(subject.id, at: 1)
        try rows.bind(gap.lower.index, at: 2)
        try rows.bind(gap.upper.index, at: 3)
        try rows.forEachRow { row in try row.withBytes(at: 2) { try visit(Hour(index: row.int64(at: 0)), row.int64(at: 1), $0) } }
    }

    // MARK: Status

    public func latestBatchHour() throws -> Hour? {
        // max() over the ranked index: SQLite reads it from the last entry backwards and stops
        // at the first with plays (batch rows hold plays > 0, so at once).
        try batch.cachedStatement("SELECT max(hour) FROM batch_hours WHERE plays > 0").singleInt64().map(Hour.init(index:))
    }

    public func latestRealtimeHour(before: Hour) throws -> Hour? {
        let latest = try realtime.cachedStatement("SELECT max(hour) FROM realtime_counts WHERE hour < ?1 AND plays > 0")
        try latest.bind(before.index, at: 1)
        return try latest.singleInt64().map(Hour.init(index:))
    }

    public func recentRuns(limit: Int) throws -> [BatchRun] {
        try batch.read { try BatchRecords.recentRuns(limit: limit, SQLiteDialect($0)) }
    }

    public func partitions() throws -> [PartitionStatus] {
        try PartitionOffsets.statuses(SQLiteDialect(realtime))
    }

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
extension SQLiteLayers: Sendable {}

extension SQLiteLayers {
    /// The batch statements in SQLite's placeholders; rankings read the (bucket, plays DESC,
    /// track_id) index by name, so the planner never sorts a bucket instead.
    static let batchSQL = SubjectKind.allCases.map {
        Catalogue.BatchStatements($0, placeholder: { "?\($0)" }, rankedHint: { " INDEXED BY \(Catalogue.rankedIndex($0, $1))" })
    }
    static let realtimeSQL = SubjectKind.allCases.map { Catalogue.RealtimeStatements($0, placeholder: { "?\($0)" }) }

    /// `realtimeSum(kind, gaps:)` for 0 to 4 gaps, per kind: the usual numbers, built once.
    static let realtimeSums: [[String]] = SubjectKind.allCases.map { kind in (0...4).map { realtimeSum(kind, gaps: $0) } }

    /// Σ plays of the subject ?1 over `gaps` gaps, gap i bound at ?(2i+2), ?(2i+3): each gap its
    /// own index range.
    static func realtimeSum(_ kind: SubjectKind, gaps: Int) -> String {
        "SELECT " + Catalogue.realtimeSum(kind, id: "?1", over: (0..<gaps).map { .one(lower: "?\(2 * $0 + 2)", upper: "?\(2 * $0 + 3)") })
    }
}
