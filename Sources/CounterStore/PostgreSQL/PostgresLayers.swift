import CounterpointCore
import PostgresDB

/// `LayerReads` on PostgreSQL: one connection, and one REPEATABLE READ READ ONLY transaction
/// per snapshot. Both layers live in the one database, so that single snapshot is consistent
/// across them — stronger than the realtime-then-batch ordering the SQLite files need.
///
/// Not `Sendable`: one per server thread. After a lost connection a read throws
/// `PostgresError` (kind `.connection`); the next `beginSnapshots()` reconnects.
public final class PostgresLayers: LayerReads {
    private let database: PostgresDatabase
    /// The connection whose transaction is the current snapshot; nil between snapshots.
    private var snapshot: PostgresConnection?
    /// Whether no writer that leaves hours unstamped is recorded in the snapshot (`RealtimeHourStamps`).
    private var stampsTrusted = false

    /// Connects at once (an unreachable database fails here) and creates or migrates the
    /// schema, so a reader can start before any writer has — except on a hot standby, where it
    /// only checks the schema's version (`PostgresSchema.prepareReader`).
    public init(url: String) throws {
        database = PostgresDatabase(url: url) { try PostgresSchema.prepareReader($0) }
        _ = try database.connection()
    }

    // MARK: Snapshots

    public func beginSnapshots() throws -> SnapshotState {
        do {
            // The snapshot's state in the same round trip as BEGIN; coverage as "lower:upper,…".
            // After a server restart the idle connection is replaced here, so no reader thread
            // answers 503 for a database that is up again. A snapshot still open on the same
            // connection ends in the same round trip.
            let open = snapshot
            snapshot = nil
            let state = try database.withReconnect { connection in
                let renewing = open === connection
                if !renewing { open?.endRead() }
                // The standby's lag is asked of standbys only (see `standbyLagMillisecondsSQL`).
                let standbyLag = try connection.isHotStandby() ? PostgresConnection.standbyLagMillisecondsSQL : "NULL::bigint"
                snapshot = connection
                return try connection.beginRead(renewing: renewing, firstQuery: """
                    SELECT (SELECT max(flushed_at) FROM realtime_flushes),
                           (SELECT sum(greatest(high_watermark - next_offset, 0)) FROM partition_offsets
                            WHERE high_watermark IS NOT NULL)::bigint,
                           (SELECT string_agg(lower || ':' || upper, ',' ORDER BY lower) FROM coverage),
                           txid_current_snapshot()::text,
                           \(standbyLag),
                           (NOT EXISTS (SELECT 1 FROM realtime_flushes WHERE NOT stamps))::int
                    """)
            }
            stampsTrusted = state.optionalInt64(row: 0, column: 5) == 1
            let ranges = state.string(row: 0, column: 2).split(separator: ",").compactMap { range -> HourRange? in
                let bounds = range.split(separator: ":").compactMap { Int64($0) }
                return bounds.count == 2 ? HourRange(Hour(index: bounds[0]), Hour(index: bounds[1])) : nil
            }
            // The transaction's snapshot itself (xmin:xmax:in-progress ids): two snapshots that
            // print alike see the same committed transactions, whichever writers made them.
            // (`txid_current_snapshot`, not its PostgreSQL 13 successor, for the compatible engines.)
            return SnapshotState(coverage: Coverage(ranges), realtimeFlushedAt: state.optionalInt64(row: 0, column: 0),
                                 realtimeLagEvents: state.optionalInt64(row: 0, column: 1),
                                 realtimeVersion: state.string(row: 0, column: 3),
                                 standbyLagMilliseconds: state.optionalInt64(row: 0, column: 4))
        } catch {
            endSnapshots()
            throw error
        }
    }

    public func endSnapshots() {
        snapshot?.endRead()
        snapshot = nil
    }

    /// Runs `sql` in the current snapshot (or on its own outside one).
    private func query(_ sql: String, _ parameters: [any PostgresParameter]) throws -> PostgresResult {
        do {
            return try (snapshot ?? database.connection()).query(sql, parameters)
        } catch {
            dropIfLost(error)
            throw error
        }
    }

    private func dropIfLost(_ error: Error) {
        if let error = error as? PostgresError, error.kind == .connection { database.disconnect() }
    }

    // MARK: Batch layer

    public func batchSum(_ subject: Subject, over part: RollupDecomposition) throws -> Int64 {
        // One statement over the non-empty spans: a point lookup is one round trip.
        let (mask, parameters) = Self.slots(of: part, id: subject.id)
        guard mask != 0 else { return 0 }
        return try query(Self.batchSQL[subject.kind.rawValue].sumBySlots[mask], parameters).singleInt64 ?? 0
    }

    public func batchCounts(_ subject: Subject, over part: RollupDecomposition) throws -> SignalCounts {
        let (mask, parameters) = Self.slots(of: part, id: subject.id)
        guard mask != 0 else { return .zero }
        var counts = SignalCounts()
        let result = try query(Self.batchSQL[subject.kind.rawValue].countsBySlots[mask], parameters)
        for row in 0..<result.rowCount { counts.add(PostgresRow(result: result, row: row).signalCounts(from: 0)) }
        return counts
    }

    public func batchBuckets(_ subject: Subject, in span: RollupSpan, signal: Signal, _ visit: (Int64, Int64) -> Void) throws {
        let result = try query(Self.batchSQL[subject.kind.rawValue].buckets[signal.ordinal][span.level.rawValue], [subject.id, span.lower, span.upper])
        for row in 0..<result.rowCount { visit(result.int64(row: row, column: 0), result.int64(row: row, column: 1)) }
    }

    public func batchRanked(_ kind: SubjectKind, level: RollupLevel, key: Int64, signal: Signal, after: RankedEntry?,
                            limit: Int) throws -> [RankedEntry] {
        let result = try after.map {
            try query(Self.batchSQL[kind.rawValue].rankedAfter[signal.ordinal][level.rawValue], [key, $0.plays, $0.id, limit])
        } ?? query(Self.batchSQL[kind.rawValue].ranked[signal.ordinal][level.rawValue], [key, limit])
        return (0..<result.rowCount).map {
            RankedEntry(id: result.int64(row: $0, column: 0), plays: result.int64(row: $0, column: 1))
        }
    }

    // MARK: Realtime layer

    public func realtimeSum(_ subject: Subject, over gaps: [HourRange]) throws -> Int64 {
        guard !gaps.isEmpty else { return 0 }
        return try query("SELECT " + Self.realtimeSum(subject.kind, lowers: 2), [subject.id] + Self.arrays(of: gaps)).singleInt64 ?? 0
    }

    public func trackSums(_ kind: SubjectKind, ids tracks: [Int64], batchParts: [RollupDecomposition],
                          realtimeGaps: [HourRange]) throws -> [TrackPlays] {
        // Every track and both layers in one statement: a point lookup on a held snapshot is one
        // round trip, and so is a multi-track request's (docs/postgresql.md). A range the batch
        // covers entirely asks the batch alone: the realtime subquery cost a fifth of the
        // server's work per lookup even when it found nothing (docs/performance.md).
        guard let read = OneStatementRead(batchParts: batchParts, realtimeGaps: realtimeGaps) else {
            return try tracks.map { try sumsOneLayerAtATime(Subject(kind, $0), batchParts: batchParts, realtimeGaps: realtimeGaps) }
        }
        guard !tracks.isEmpty, !read.findsNothing else {
            return tracks.map { TrackPlays(id: $0, batchPlays: 0, realtimePlays: 0) }
        }
        let manyTracks = tracks.count > 1
        let trackParameter: any PostgresParameter = manyTracks ? PostgresInt64Array(tracks) : tracks[0]
        // One row per track, in order (`unnest … WITH ORDINALITY`).
        let sql = Self.trackSumsSQL[kind.rawValue][manyTracks ? 1 : 0][read.withRealtime ? 1 : 0][read.mask]
        let result = try query(sql, [trackParameter] + read.parameters)
        return tracks.indices.map { row in
            TrackPlays(id: tracks[row], batchPlays: result.optionalInt64(row: row, column: 0) ?? 0,
                       realtimePlays: read.withRealtime ? result.optionalInt64(row: row, column: 1) ?? 0 : 0)
        }
    }

    public func realtimeCounts(_ subject: Subject, over gaps: [HourRange]) throws -> SignalCounts {
        var counts = SignalCounts()
        for gap in gaps {
            let result = try query(Self.realtimeSQL[subject.kind.rawValue].counts, [subject.id, gap.lower.index, gap.upper.index])
            for row in 0..<result.rowCount { counts.add(PostgresRow(result: result, row: row).signalCounts(from: 0)) }
        }
        return counts
    }

    public func realtimeHours(_ subject: Subject, in gap: HourRange, signal: Signal, _ visit: (Hour, Int64) -> Void) throws {
        let result = try query(Self.realtimeSQL[subject.kind.rawValue].hours[signal.ordinal], [subject.id, gap.lower.index, gap.upper.index])
        for row in 0..<result.rowCount { visit(Hour(index: result.int64(row: row, column: 0)), result.int64(row: row, column: 1)) }
    }

    public func batchDimensions(_ subject: Subject, over part: RollupDecomposition, _ visit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let (mask, parameters) = Self.slots(of: part, id: subject.id)
        guard mask != 0 else { return }
        let result = try query(Self.batchSQL[subject.kind.rawValue].dimensionsBySlots[mask], parameters)
        for row in 0..<result.rowCount { try result.withBytes(row: row, column: 0, visit) }
    }

    public func realtimeDimensions(_ subject: Subject, over gaps: [HourRange], _ visit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !gaps.isEmpty else { return }
        let result = try query(Self.realtimeDimensionsSQL(subject.kind, lowers: 2, selecting: ""), [subject.id] + Self.arrays(of: gaps))
        for row in 0..<result.rowCount { try result.withBytes(row: row, column: 0, visit) }
    }

    public func trackDimensions(_ subject: Subject, batchParts: [RollupDecomposition], realtimeGaps: [HourRange],
                                _ visit: (UnsafeRawBufferPointer) throws -> Void) throws -> TrackPlays {
        // The sums and every blob in one statement: a waveform or breakdown on a held snapshot
        // is one round trip, as a point lookup is.
        guard let read = OneStatementRead(batchParts: batchParts, realtimeGaps: realtimeGaps) else {
            return try dimensionsOneLayerAtATime(subject, batchParts: batchParts, realtimeGaps: realtimeGaps, visit)
        }
        let track = subject.id
        guard !read.findsNothing else { return TrackPlays(id: track, batchPlays: 0, realtimePlays: 0) }
        let result = try query(Self.trackDimensionsSQL[subject.kind.rawValue][read.withRealtime ? 1 : 0][read.mask], [track] + read.parameters)
        var plays = TrackPlays(id: track, batchPlays: 0, realtimePlays: 0)
        for row in 0..<result.rowCount {
            if result.int64(row: row, column: 0) == 0 {
                plays = TrackPlays(id: track, batchPlays: result.optionalInt64(row: row, column: 1) ?? 0,
                                   realtimePlays: result.optionalInt64(row: row, column: 2) ?? 0)
            } else {
                try result.withBytes(row: row, column: 3, visit)
            }
        }
        return plays
    }

    public func realtimeRows(_ kind: SubjectKind, in gap: HourRange, signal: Signal, _ visit: (Int64, Int64) -> Void) throws {
        // Summed per subject by the server: a row per subject crosses the wire, not one per (subject, hour).
        let result = try query(Self.realtimeSQL[kind.rawValue].sumsInWindow[signal.ordinal], [gap.lower.index, gap.upper.index])
        for row in 0..<result.rowCount { visit(result.int64(row: row, column: 0), result.int64(row: row, column: 1)) }
    }

    public func realtimeHourStamps(in gap: HourRange) throws -> [(hour: Int64, stamp: Int64)]? {
        guard stampsTrusted else { return nil }
        let result = try query("SELECT hour, changes FROM realtime_hours WHERE hour >= $1 AND hour < $2 ORDER BY hour",
                               [gap.lower.index, gap.upper.index])
        return (0..<result.rowCount).map { (result.int64(row: $0, column: 0), result.int64(row: $0, column: 1)) }
    }

    // MARK: Listeners

    public func batchListeners(_ subject: Subject, over part: RollupDecomposition, _ visit: (Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        // One statement over the non-empty spans: one round trip whatever the range.
        let (mask, parameters) = Self.slots(of: part, id: subject.id)
        guard mask != 0 else { return }
        let result = try query(Self.batchSQL[subject.kind.rawValue].listenersBySlots[mask], parameters)
        for row in 0..<result.rowCount { try result.withBytes(row: row, column: 1) { try visit(result.int64(row: row, column: 0), $0) } }
    }

    public func batchListenerBuckets(_ subject: Subject, in span: RollupSpan,
                                     _ visit: (Int64, Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        let result = try query(Self.batchSQL[subject.kind.rawValue].listeners[span.level.rawValue], [subject.id, span.lower, span.upper])
        for row in 0..<result.rowCount {
            try result.withBytes(row: row, column: 2) { try visit(result.int64(row: row, column: 0), result.int64(row: row, column: 1), $0) }
        }
    }

    public func realtimeListeners(_ subject: Subject, in gap: HourRange, _ visit: (Hour, Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        let result = try query(Self.realtimeSQL[subject.kind.rawValue].listeners, [subject.id, gap.lower.index, gap.upper.index])
        for row in 0..<result.rowCount {
            try result.withBytes(row: row, column: 2) {
                try visit(Hour(index: result.int64(row: row, column: 0)), result.int64(row: row, column: 1), $0)
            }
        }
    }

    // MARK: Status

    public func latestBatchHour() throws -> Hour? {
        // A backward scan of the ranked index (hour, plays DESC, track_id), stopping at the first row with plays.
        try query("SELECT hour FROM batch_hours WHERE plays > 0 ORDER BY hour DESC LIMIT 1", []).singleInt64.map(Hour.init(index:))
    }

    public func latestRealtimeHour(before: Hour) throws -> Hour? {
        try query("SELECT hour FROM realtime_counts WHERE hour < $1 AND plays > 0 ORDER BY hour DESC LIMIT 1",
                  [before.index]).singleInt64.map(Hour.init(index:))
    }

    public func recentRuns(limit: Int) throws -> [BatchRun] {
        do {
            if let snapshot { return try BatchRecords.recentRuns(limit: limit, PostgresDialect(snapshot)) }
            return try database.withConnection { connection in
                try connection.read { try BatchRecords.recentRuns(limit: limit, PostgresDialect($0)) }
            }
        } catch {
            dropIfLost(error)
            throw error
        }
    }

    public func partitions() throws -> [PartitionStatus] {
        do {
            return try PartitionOffsets.statuses(PostgresDialect(snapshot ?? database.connection()))
        } catch {
            dropIfLost(error)
            throw error
        }
    }

    public func isReadable() -> Bool {
        do {
            _ = try query("SELECT (SELECT count(*) FROM coverage) + (SELECT count(*) FROM realtime_flushes)", [])
            return true
        } catch {
            return false
        }
    }
}

@available(*, unavailable)
extension PostgresLayers: Sendable {}

extension PostgresLayers {
    static let batchSQL = SubjectKind.allCases.map { Catalogue.BatchStatements($0, placeholder: { "$\($0)" }) }
    static let realtimeSQL = SubjectKind.allCases.map { Catalogue.RealtimeStatements($0, placeholder: { "$\($0)" }) }

    /// What a read of one batch part and the realtime gaps asks for in one statement: the part's
    /// non-empty slots (`mask`), whether there are gaps, and the parameters after the track —
    /// each slot's bounds, then the gaps' two arrays. Nil for more than one batch part, which is
    /// read a part at a time.
    struct OneStatementRead {
        let mask: Int
        let withRealtime: Bool
        let parameters: [any PostgresParameter]

        init?(batchParts: [RollupDecomposition], realtimeGaps: [HourRange]) {
            guard batchParts.count <= 1 else { return nil }
            let (mask, bounds) = batchParts.first.map { PostgresLayers.slotBounds(of: $0) } ?? (0, [])
            self.mask = mask
            withRealtime = !realtimeGaps.isEmpty
            parameters = bounds + (withRealtime ? PostgresLayers.arrays(of: realtimeGaps) : [])
        }

        /// No slot and no gap: nothing to ask.
        var findsNothing: Bool { mask == 0 && !withRealtime }
    }

    /// The parameter of the gaps' lower bounds in a statement whose slots are those of `mask`
    /// (after the track and each slot's two bounds).
    static func gapsParameter(mask: Int) -> Int {
        2 * Catalogue.slotLevels(mask: mask).count + 2
    }

    /// The realtime gaps as two array parameters, of lower bounds (parameter `lowers`) and upper
    /// bounds (the next): one statement shape whatever their number.
    static func gapArrays(lowers: Int) -> Catalogue.GapBounds {
        .arrays(lowers: "$\(lowers)", uppers: "$\(lowers + 1)")
    }

    /// Σ realtime plays of the subject (`id`, by default $1) over the gaps of `gapArrays(lowers:)`.
    static func realtimeSum(_ kind: SubjectKind, lowers: Int, id: String = "$1") -> String {
        Catalogue.realtimeSum(kind, id: id, over: [gapArrays(lowers: lowers)])
    }

    /// `trackSumsSQL[manyTracks][withRealtime][mask]` (0 or 1 for each flag): the batch sum of
    /// `batchSQL.sumBySlots[mask]` (the slots' bounds from $2 on) and, with realtime, the
    /// realtime sum (its gaps' arrays after the slots' bounds), for one track ($1) or for each of
    /// an array of them ($1, one row each, in order).
    static let trackSumsSQL = SubjectKind.allCases.map { kind in
        [false, true].map { manyTracks in
            [false, true].map { withRealtime in
                let track = manyTracks ? "u.t" : "$1"
                let batch = manyTracks ? Catalogue.BatchStatements(kind, placeholder: { $0 == 1 ? track : "$\($0)" }) : batchSQL[kind.rawValue]
                return batch.sumExpressionBySlots.enumerated().map { mask, batchSum in
                    let realtime = withRealtime ? ", " + realtimeSum(kind, lowers: gapsParameter(mask: mask), id: track) : ""
                    let from = manyTracks ? " FROM unnest($1::bigint[]) WITH ORDINALITY AS u (t, n) ORDER BY u.n" : ""
                    return "SELECT \(batchSum)\(realtime)\(from)"
                }
            }
        }
    }

    /// `trackDimensionsSQL[withRealtime][mask]`: a row (0, batch sum, realtime sum or 0, NULL)
    /// and a row (1, NULL, NULL, blob) per dimension blob of the batch slots of `mask` and of the
    /// realtime gaps, with the parameters of `trackSumsSQL[0][withRealtime][mask]`.
    static let trackDimensionsSQL = SubjectKind.allCases.map { kind in
        [false, true].map { withRealtime in
            batchSQL[kind.rawValue].sumExpressionBySlots.enumerated().map { mask, batchSum in
                let lowers = gapsParameter(mask: mask)
                let realtime = withRealtime ? realtimeSum(kind, lowers: lowers) : "0::bigint"
                var sql = "SELECT 0::bigint, \(batchSum), \(realtime), NULL::bytea"
                if mask != 0 {
                    sql += " UNION ALL SELECT 1, NULL, NULL, b.dimensions FROM (\(batchSQL[kind.rawValue].dimensionsBySlots[mask])) AS b"
                }
                if withRealtime {
                    sql += " UNION ALL " + realtimeDimensionsSQL(kind, lowers: lowers, selecting: "1, NULL, NULL, ")
                }
                return sql
            }
        }
    }

    /// The realtime dimension blobs of the subject ($1) over the gaps of `gapArrays(lowers:)`,
    /// after the columns `selecting`.
    static func realtimeDimensionsSQL(_ kind: SubjectKind, lowers: Int, selecting columns: String) -> String {
        "SELECT \(columns)r.dimensions FROM \(Catalogue.realtimeRows(kind, id: "$1", in: gapArrays(lowers: lowers))) AND r.dimensions IS NOT NULL"
    }

    /// `gaps` as the two array parameters of `gapArrays(lowers:)`.
    static func arrays(of gaps: [HourRange]) -> [any PostgresParameter] {
        [PostgresInt64Array(gaps.map(\.lower.index)), PostgresInt64Array(gaps.map(\.upper.index))]
    }

    /// The non-empty slots of `part` as a mask (bit i: slot i) and the parameters of the
    /// `…BySlots[mask]` statements: the track, then each slot's bounds.
    static func slots(of part: RollupDecomposition, id: Int64) -> (mask: Int, parameters: [any PostgresParameter]) {
        let (mask, bounds) = slotBounds(of: part)
        return (mask, [id] + bounds)
    }

    /// The non-empty slots of `part` as a mask and each slot's bounds, in slot order (the
    /// parameters from $2 on).
    static func slotBounds(of part: RollupDecomposition) -> (mask: Int, bounds: [any PostgresParameter]) {
        let (mask, spans) = Catalogue.nonEmptySlots(of: part)
        return (mask, spans.flatMap { [$0.lower, $0.upper] as [any PostgresParameter] })
    }
}
