import CounterpointCore
import Runtime

/// The one batch replacement of both backends, inside the backend's write transaction: the
/// replaced hours leave the day and month rollups (their rows read back and summed per track),
/// are deleted, and the run's rows go in through `BatchRowSink`, which adds each buffer's
/// day and month sums to the rollups as it writes the hours — so `batch_days` and
/// `batch_months` stay the sums of `batch_hours` at a cost that follows the hours replaced,
/// not the days or months around them. Then empty buckets go and the run is recorded.
///
/// Listener sketches add to the rollups by union the same way, but a union cannot be
/// subtracted: the (track, day)s and (track, month)s whose replaced hours held a sketch that
/// the new hour does not hold are rebuilt from their hours and days once the new hours are in
/// (`ListenerRollups`).
enum BatchReplacement {
    static func replace<D: StoreDialect>(_ target: ReplaceTarget, sources: [HourSource], sortBufferRows: Int, in db: D,
                                         rows: (BatchRowWriter) throws -> BatchRun) throws -> BatchRun {
        // Every subject kind's tables are replaced the same way, in the one transaction.
        let sinks = try SubjectKind.allCases.map { kind in
            let stale = ListenerRollups(kind)
            try subtractReplacedHours(target.pieces, kind, db, staleListeners: stale)
            let hours = Catalogue.batch(.hour, kind)
            for range in target.coverage.ranges {
                try db.run("DELETE FROM \(hours.name) WHERE hour >= $1 AND hour < $2", .integer(range.lower.index), .integer(range.upper.index))
            }
            return BatchRowSink(db, kind, target: target, capacity: sortBufferRows, staleListeners: stale)
        }
        let run = try rows(BatchRowWriter { row in try sinks[row.kind.rawValue].write(row) })
        for (kind, sink) in zip(SubjectKind.allCases, sinks) {
            try sink.drain()
            try sink.staleListeners.rebuild(db)
            try dropEmptyBuckets(target.pieces, kind, db)
        }
        return try target.finishReplacement(run, sources: sources, in: db)
    }

    /// Takes the hours of every piece — every signal, dimension counts and listener plays — out of
    /// their day and month rows, and notes the sketches they held (`ListenerRollups`). A
    /// first run over new hours finds nothing; a rerun reads each old row once. A month's sums
    /// are added up over its pieces and written once (a run over a month would otherwise
    /// update every month row once per day).
    private static func subtractReplacedHours<D: StoreDialect>(_ pieces: [RollupPiece], _ kind: SubjectKind, _ db: D,
                                                               staleListeners: ListenerRollups) throws {
        let hours = Catalogue.batch(.hour, kind)
        var month = RowBuffer()
        var piece = RowBuffer()
        for (index, current) in pieces.enumerated() {
            try db.query("""
                SELECT dimensions, listener_plays, listeners, \(hours.idColumn), hour, \(Catalogue.signalColumns.joined(separator: ", "))
                FROM \(hours.name) WHERE hour >= $1 AND hour < $2
                """, [.integer(current.hours.lower.index), .integer(current.hours.upper.index)]) { row in
                let trackID = row.int64(at: 3)
                let hour = Hour(index: row.int64(at: 4))
                row.withBytes(at: 0) { piece.append(CountRow(id: trackID, hour: hour, counts: row.signalCounts(from: 5)),
                                                    dimensions: $0, listenerPlays: row.int64(at: 1)) }
                row.withBytes(at: 2) { sketch in
                    if !sketch.isEmpty { staleListeners.noteReplaced(trackID: trackID, hour: hour, sketch: sketch, piece: current) }
                }
            }
            if !piece.isEmpty {
                let days = try piece.sorted(into: hours, sign: -1).rolledUp(to: .day)
                try db.add(days)
                days.dimensions.withBlobs { blob in
                    for row in days.indices {
                        month.append(CountRow(id: days.firstKeys[row], hour: RollupLevel.day.firstHour(ofKey: days.secondKeys[row]),
                                              counts: days.counts[row]), dimensions: blob(row), listenerPlays: days.listenerPlays[row])
                    }
                }
                piece.removeAll()
            }
            let monthEnds = index + 1 == pieces.count || pieces[index + 1].month != current.month
            if monthEnds, !month.isEmpty {
                try db.add(try month.sorted(into: hours, sign: 1).rolledUp(to: .month))
                month.removeAll()
            }
        }
    }

    /// Removes rollup rows left at 0 in every signal and without dimension counts (a subject with
    /// nothing left in a rebuilt bucket), so that every rollup row, like every hour row, holds a
    /// count that is not 0 — or comments on the waveform whose net count is (SPEC §11).
    private static func dropEmptyBuckets<D: StoreDialect>(_ pieces: [RollupPiece], _ kind: SubjectKind, _ db: D) throws {
        for (level, keys) in [(RollupLevel.day, Set(pieces.map(\.day))), (.month, Set(pieces.map(\.month)))] {
            let table = Catalogue.batch(level, kind)
            for key in keys.sorted() {
                try db.run("DELETE FROM \(table.name) WHERE \(table.keys.second) = $1 AND \(Catalogue.allSignalsZero)"
                    + " AND (dimensions IS NULL OR length(dimensions) = 0)", .integer(key))
            }
        }
    }
}

/// The one batch row sink: buffers a run's rows, and when the buffer is full (and at the end)
/// sorts it by (track, hour), sums it into `CounterRows` and adds those to `batch_hours` and
/// their day and month sums to the rollups. The same key in two buffers adds up in the table.
/// Sorted rows sweep the primary key's pages once.
final class BatchRowSink<D: StoreDialect> {
    private let db: D
    private let kind: SubjectKind
    private let target: ReplaceTarget
    private let capacity: Int
    let staleListeners: ListenerRollups
    private var buffer = RowBuffer()

    init(_ db: D, _ kind: SubjectKind, target: ReplaceTarget, capacity: Int, staleListeners: ListenerRollups) {
        self.db = db
        self.kind = kind
        self.target = target
        self.capacity = max(1, capacity)
        self.staleListeners = staleListeners
    }

    func write(_ row: BatchRowWriter.Row) throws {
        // A row netting 0 in every signal may still place comments on the waveform: a comment
        // and a deletion in other buckets.
        guard try target.admits(row.counts, of: kind) || !row.dimensions.isEmpty else { return }
        staleListeners.noteNew(trackID: row.counts.id, hour: row.counts.hour, sketch: row.listeners)
        buffer.append(row.counts, dimensions: row.dimensions, listenerPlays: row.listenerPlays, listeners: row.listeners)
        if buffer.count >= capacity { try drain() }
    }

    /// The day and month sums are rolled up on a thread of their own while the hours are
    /// written: on logs of many tracks this thread, which writes the store, is the batch's
    /// critical path (docs/performance.md).
    func drain() throws {
        guard !buffer.isEmpty else { return }
        let hours = try buffer.sorted(into: Catalogue.batch(.hour, kind), sign: 1)
        buffer.removeAll()
        let rollups = Completion<(days: CounterRows, months: CounterRows)>()
        _ = BlockingThread(name: "batch-rollups") {
            _ = rollups.complete(Result {
                let days = try hours.rolledUp(to: .day)
                return (days, try days.rolledUp(to: .month))
            })
        }
        try db.add(hours)
        let (days, months) = try rollups.wait().get()
        try db.add(days)
        try db.add(months)
    }
}

/// Rows in arrival order with their blobs back to back (plain values sort and move without
/// reference counting), until `sorted` orders and sums them. A row's signals other than plays
/// wait in a list of their own, so rows of plays alone keep the size they had before there
/// were other signals (a buffer holds a million rows).
struct RowBuffer {
    private struct Entry {
        var trackID: Int64
        var hour: Int64
        var plays: Int64
        /// The row's other signals in `others`; −1 when it has none.
        var others: Int
        var listenerPlays: Int64
        var dimensions: Range<Int>
        var listeners: Range<Int>
    }

    private var entries: [Entry] = []
    private var others: [SignalCounts] = []
    private var arena: [UInt8] = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    mutating func append(_ row: CountRow, dimensions: UnsafeRawBufferPointer, listenerPlays: Int64 = 0,
                         listeners: UnsafeRawBufferPointer = CounterRows.noBlob) {
        if entries.isEmpty { entries.reserveCapacity(1 << 12) }
        let dimensionStart = arena.count
        arena.append(contentsOf: dimensions)
        let listenerStart = arena.count
        arena.append(contentsOf: listeners)
        var rest = row.counts
        rest.plays = 0
        if !rest.isZero { others.append(rest) }
        entries.append(Entry(trackID: row.id, hour: row.hour.index, plays: row.plays, others: rest.isZero ? -1 : others.count - 1,
                             listenerPlays: listenerPlays, dimensions: dimensionStart..<listenerStart, listeners: listenerStart..<arena.count))
    }

    /// The rows sorted by (track, hour) and summed per key, times `sign`, as rows of `table`
    /// (keyed (track, hour)).
    mutating func sorted(into table: CounterTable, sign: Int64) throws -> CounterRows {
        entries.sort { $0.trackID != $1.trackID ? $0.trackID < $1.trackID : $0.hour < $1.hour }
        var rows = CounterRows(table)
        rows.reserveCapacity(entries.count)
        try arena.withUnsafeBytes { arena in
            for entry in entries {
                var counts = entry.others < 0 ? SignalCounts() : others[entry.others]
                counts.plays = entry.plays
                try rows.append(entry.trackID, entry.hour, counts: counts,
                                dimensions: UnsafeRawBufferPointer(rebasing: arena[entry.dimensions]),
                                listenerPlays: entry.listenerPlays, listeners: UnsafeRawBufferPointer(rebasing: arena[entry.listeners]),
                                sign: sign)
            }
        }
        return rows
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        others.removeAll()
        arena.removeAll(keepingCapacity: true)
    }
}
