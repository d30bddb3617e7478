import CounterpointCore

/// The hours one batch replacement covers, checked the same way by every backend.
struct ReplaceTarget {
    /// The normalized ranges.
    let coverage: Coverage
    /// From the first hour to the last: what the run is recorded over.
    let span: HourRange
    /// `coverage` cut at day boundaries, for the rollups.
    let pieces: [RollupPiece]

    /// Throws `CounterStoreError.emptyRange` when `ranges` hold no hour.
    init(_ ranges: [HourRange]) throws {
        coverage = Coverage(ranges)
        guard let first = coverage.ranges.first, let last = coverage.ranges.last else {
            throw CounterStoreError.emptyRange(ranges.first ?? HourRange(Hour(index: 0), Hour(index: 0)))
        }
        span = HourRange(first.lower, last.upper)
        pieces = RollupPiece.pieces(of: coverage)
    }

    /// Whether a batch row sink keeps `row`: throws for a row outside the target's hours or with
    /// an invalid track or plays; false for a row of 0 plays, which adds nothing.
    func admits(_ row: CountRow) throws -> Bool {
        guard coverage.contains(row.hour) else {
            throw CounterStoreError.rowOutsideRange(trackID: row.trackID, hour: row.hour, range: coverage.ranges[0])
        }
        guard row.trackID > 0, row.plays >= 0 else {
            throw CounterStoreError.invalidRow(trackID: row.trackID, hour: row.hour, plays: row.plays)
        }
        return row.plays > 0
    }
}

/// The tables every replacement ends by writing, as one backend reaches them inside the
/// replacement's transaction: `ReplaceTarget.finishReplacement` writes them the same way on
/// SQLite and PostgreSQL.
protocol BatchRecordTables {
    associatedtype Connection
    /// Inserts `run` (with its rejections by reason) and returns its id.
    static func insertRun(_ run: BatchRun, _ db: Connection) throws -> Int64
    static func coverage(_ db: Connection) throws -> Coverage
    static func saveCoverage(_ coverage: Coverage, _ db: Connection) throws
    /// Records what each hour was computed from, under the run that computed it.
    static func saveSources(_ sources: [HourSource], runID: Int64, _ db: Connection) throws
}

extension ReplaceTarget {
    /// The tail of every replacement, after the new rows are in: records `run` over the span
    /// (returned with its id), adds the target to the coverage and saves the hours' sources —
    /// all in `db`'s transaction, so none of it is kept unless the rows are.
    func finishReplacement<Tables: BatchRecordTables>(_ run: BatchRun, sources: [HourSource],
                                                      in db: Tables.Connection, _: Tables.Type) throws -> BatchRun {
        var recorded = run
        recorded.range = span
        recorded.id = try Tables.insertRun(recorded, db)
        var covered = try Tables.coverage(db)
        for range in coverage.ranges { covered.insert(range) }
        try Tables.saveCoverage(covered, db)
        try Tables.saveSources(sources, runID: recorded.id, db)
        return recorded
    }
}

/// A part of a batch run's target inside one UTC day (and so one month): the unit in which
/// both backends move hours into and out of the day and month rollups, so that the cost of a
/// replacement follows the hours replaced, not the days or months around them.
struct RollupPiece: Hashable {
    var hours: HourRange
    var day: Int64
    var month: Int64

    /// `target` cut at day boundaries.
    static func pieces(of target: Coverage) -> [RollupPiece] {
        var pieces: [RollupPiece] = []
        for range in target.ranges {
            var cursor = range.lower
            while cursor < range.upper {
                let day = UTCCalendar.day(of: cursor)
                let end = min(range.upper, Hour(index: (day + 1) * 24))
                pieces.append(RollupPiece(hours: HourRange(cursor, end), day: day, month: UTCCalendar.month(ofDay: day)))
                cursor = end
            }
        }
        return pieces
    }
}
