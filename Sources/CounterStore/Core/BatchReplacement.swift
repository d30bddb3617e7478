import CounterpointCore

/// The one batch replacement of both backends, inside the backend's write transaction: the
/// replaced hours leave the day and month rollups (their rows read back and summed per track),
/// are deleted, and the run's rows go in through `BatchRowSink`, which adds each buffer's
/// day and month sums to the rollups as it writes the hours — so `batch_days` and
/// `batch_months` stay the sums of `batch_hours` at a cost that follows the hours replaced,
/// not the days or months around them. Then empty buckets go and the run is recorded.
enum BatchReplacement {
    static func replace<D: StoreDialect>(_ target: ReplaceTarget, sources: [HourSource], sortBufferRows: Int, in db: D,
                                         rows: (BatchRowWriter) throws -> BatchRun) throws -> BatchRun {
        try subtractReplacedHours(target.pieces, db)
        let hours = Catalogue.batch(.hour)
        for range in target.coverage.ranges {
            try db.run("DELETE FROM \(hours.name) WHERE hour >= $1 AND hour < $2", .integer(range.lower.index), .integer(range.upper.index))
        }
        let sink = BatchRowSink(db, target: target, capacity: sortBufferRows)
        let run = try rows(BatchRowWriter(sink: sink.write))
        try sink.drain()
        try dropEmptyBuckets(target.pieces, db)
        return try target.finishReplacement(run, sources: sources, in: db)
    }

    /// Takes the hours of every piece — plays and dimension counts — out of their day and month
    /// rows. A first run over new hours finds nothing; a rerun reads each old row once. A
    /// month's sums are added up over its pieces and written once (a run over a month would
    /// otherwise update every month row once per day).
    private static func subtractReplacedHours<D: StoreDialect>(_ pieces: [RollupPiece], _ db: D) throws {
        let hours = Catalogue.batch(.hour)
        var month = RowBuffer()
        var piece = RowBuffer()
        for (index, current) in pieces.enumerated() {
            try db.query("""
                SELECT track_id, hour, plays, dimensions FROM \(hours.name) WHERE hour >= $1 AND hour < $2
                """, [.integer(current.hours.lower.index), .integer(current.hours.upper.index)]) { row in
                row.withBytes(at: 3) { piece.append(CountRow(trackID: row.int64(at: 0), hour: Hour(index: row.int64(at: 1)),
                                                             plays: row.int64(at: 2)), dimensions: $0) }
            }
            if !piece.isEmpty {
                let days = try piece.sorted(into: hours, sign: -1).rolledUp(to: .day)
                try db.add(days)
                days.dimensions.withBlobs { blob in
                    for row in days.indices {
                        month.append(CountRow(trackID: days.firstKeys[row], hour: RollupLevel.day.firstHour(ofKey: days.secondKeys[row]),
                                              plays: days.plays[row]), dimensions: blob(row))
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

    /// Removes rollup rows left at 0 (a track that no longer plays in a rebuilt bucket), so
    /// that every rollup row, like every hour row, has plays > 0.
    private static func dropEmptyBuckets<D: StoreDialect>(_ pieces: [RollupPiece], _ db: D) throws {
        for (level, keys) in [(RollupLevel.day, Set(pieces.map(\.day))), (.month, Set(pieces.map(\.month)))] {
            let table = Catalogue.batch(level)
            for key in keys.sorted() {
                try db.run("DELETE FROM \(table.name) WHERE \(table.keys.second) = $1 AND plays = 0", .integer(key))
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
    private let target: ReplaceTarget
    private let capacity: Int
    private var buffer = RowBuffer()

    init(_ db: D, target: ReplaceTarget, capacity: Int) {
        self.db = db
        self.target = target
        self.capacity = max(1, capacity)
    }

    func write(_ row: CountRow, dimensions: [UInt8]) throws {
        guard try target.admits(row) else { return }
        dimensions.withUnsafeBytes { buffer.append(row, dimensions: $0) }
        if buffer.count >= capacity { try drain() }
    }

    func drain() throws {
        guard !buffer.isEmpty else { return }
        let hours = try buffer.sorted(into: Catalogue.batch(.hour), sign: 1)
        buffer.removeAll()
        try db.add(hours)
        try db.add(hours.rolledUp(to: .day))
        try db.add(hours.rolledUp(to: .month))
    }
}

/// Rows in arrival order with their dimension counts back to back (plain values sort and
/// move without reference counting), until `sorted` orders and sums them.
struct RowBuffer {
    private struct Entry {
        var row: CountRow
        var dimensions: Range<Int>
    }

    private var entries: [Entry] = []
    private var arena: [UInt8] = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    mutating func append(_ row: CountRow, dimensions: UnsafeRawBufferPointer) {
        if entries.isEmpty { entries.reserveCapacity(1 << 12) }
        entries.append(Entry(row: row, dimensions: arena.count..<arena.count + dimensions.count))
        arena.append(contentsOf: dimensions)
    }

    /// The rows sorted by (track, hour) and summed per key, times `sign`, as rows of `table`
    /// (keyed (track, hour)).
    mutating func sorted(into table: CounterTable, sign: Int64) throws -> CounterRows {
        entries.sort { CountRow.byTrackThenHour($0.row, $1.row) }
        var rows = CounterRows(table)
        rows.reserveCapacity(entries.count)
        try arena.withUnsafeBytes { arena in
            for entry in entries {
                try rows.append(entry.row.trackID, entry.row.hour.index, plays: entry.row.plays,
                                dimensions: UnsafeRawBufferPointer(rebasing: arena[entry.dimensions]), sign: sign)
            }
        }
        return rows
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        arena.removeAll(keepingCapacity: true)
    }
}
