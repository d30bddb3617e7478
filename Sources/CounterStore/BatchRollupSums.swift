import CounterpointCore
import SQLiteDB

/// A batch run's rows summed per (track, day) — plays and dimension counts — as the row sink
/// writes them, and the day sums per (track, month), for the rollups: in (track, hour) order
/// each sum is a run of consecutive rows, so this costs one addition and at most one blob merge
/// per row and no lookups, and each rollup row is then written with one upsert.
struct RollupSums {
    struct Entry {
        var trackID: Int64
        var key: Int64
        var plays: Int64
        var dimensions: [UInt8]
    }

    private(set) var days: [Entry] = []
    private var scratch: [UInt8] = []

    /// Adds rows sorted by (track, hour), their dimension counts at `range` in `arena`.
    mutating func add(sorted rows: [BufferedRow], arena: UnsafeRawBufferPointer) throws {
        var day: Entry?
        for buffered in rows {
            let row = buffered.row
            try Self.accumulate(&day, into: &days, scratch: &scratch, trackID: row.trackID, key: UTCCalendar.day(of: row.hour),
                                plays: row.plays, dimensions: UnsafeRawBufferPointer(rebasing: arena[buffered.dimensions]))
        }
        if let day { days.append(day) }
    }

    /// The day sums summed per (track, month): days are in (track, day) order within each batch
    /// of rows, so a month is a run of them.
    mutating func months() throws -> [Entry] {
        var months: [Entry] = []
        var month: Entry?
        for day in days {
            try day.dimensions.withUnsafeBytes { dimensions in
                try Self.accumulate(&month, into: &months, scratch: &scratch, trackID: day.trackID,
                                    key: UTCCalendar.month(ofDay: day.key), plays: day.plays, dimensions: dimensions)
            }
        }
        if let month { months.append(month) }
        return months
    }

    private static func accumulate(_ current: inout Entry?, into list: inout [Entry], scratch: inout [UInt8],
                                   trackID: Int64, key: Int64, plays: Int64, dimensions: UnsafeRawBufferPointer) throws {
        if var entry = current, entry.trackID == trackID, entry.key == key {
            current = nil // keep the entry's blob uniquely referenced while it grows
            entry.plays += plays
            if !dimensions.isEmpty {
                if entry.dimensions.isEmpty {
                    entry.dimensions = Array(dimensions)
                } else {
                    let ok = entry.dimensions.withUnsafeBytes { old in DimensionEncoding.merge(old, dimensions, into: &scratch) }
                    guard ok else { throw CounterStoreError.malformedDimensions(trackID: trackID) }
                    swap(&entry.dimensions, &scratch)
                }
            }
            current = entry
        } else {
            if let finished = current { list.append(finished) }
            current = Entry(trackID: trackID, key: key, plays: plays, dimensions: Array(dimensions))
        }
    }

    /// Adds the sums to `batch_days` and `batch_months` (creating the rows they lack).
    mutating func write(_ db: Database) throws {
        for (table, key, entries) in [("batch_days", "day", days), ("batch_months", "month", try months())] {
            let upsert = try GroupedUpsert(db, firstRowParameter: 1, withBlob: true) { values in
                """
                INSERT INTO \(table) (\(key), track_id, plays, dimensions) VALUES \(values)
                ON CONFLICT (track_id, \(key)) DO UPDATE SET plays = plays + excluded.plays,
                    dimensions = \(DimensionTables.mergeFunction)(dimensions, excluded.dimensions)
                """
            }
            try upsert.write(entries, { ($0.key, $0.trackID, $0.plays) }, blob: { entry, bind in try entry.dimensions.withUnsafeBytes(bind) })
        }
    }
}

/// Takes the dimension counts of hours a run replaces out of their day and month rows before the
/// hours are deleted — the counterpart of `BatchRollups.subtractReplacedHours()` for plays. A first run
/// over new hours finds nothing to subtract; a rerun pays per old row.
struct BatchDimensionRollups {
    let db: Database

    init(_ db: Database) { self.db = db }

    func subtract(hours pieces: [RollupPiece]) throws {
        let select = try db.cachedStatement("""
            SELECT track_id, dimensions FROM batch_hours INDEXED BY batch_hours_ranked
            WHERE hour >= ?1 AND hour < ?2 AND dimensions IS NOT NULL ORDER BY track_id
            """)
        let updates = try [("batch_days", "day"), ("batch_months", "month")].map { table, key in
            try db.cachedStatement("""
                UPDATE \(table) SET dimensions = \(DimensionTables.mergeFunction)(dimensions, ?3)
                WHERE track_id = ?1 AND \(key) = ?2
                """)
        }
        var merged: [UInt8] = []
        var scratch: [UInt8] = []
        for piece in pieces {
            try select.bind(piece.hours.lower.index, at: 1)
            try select.bind(piece.hours.upper.index, at: 2)
            var track: Int64 = 0
            func flush() throws {
                guard track != 0, !merged.isEmpty else { return }
                let ok = merged.withUnsafeBytes { blob in
                    DimensionEncoding.merge(UnsafeRawBufferPointer(start: nil, count: 0), blob, sign: -1, into: &scratch)
                }
                guard ok else { throw CounterStoreError.malformedDimensions(trackID: track) }
                for (statement, key) in zip(updates, [piece.day, piece.month]) {
                    try statement.bind(track, at: 1)
                    try statement.bind(key, at: 2)
                    try statement.bind(bytes: scratch, at: 3)
                    try statement.execute()
                }
            }
            defer { select.reset() }
            while try select.step() {
                let rowTrack = select.int64(at: 0)
                if rowTrack != track {
                    try flush()
                    track = rowTrack
                    merged.removeAll(keepingCapacity: true)
                }
                let ok = select.withBytes(at: 1) { blob in
                    merged.withUnsafeBytes { DimensionEncoding.merge($0, blob, into: &scratch) }
                }
                guard ok else { throw CounterStoreError.malformedDimensions(trackID: track) }
                swap(&merged, &scratch)
            }
            try flush()
        }
    }
}
