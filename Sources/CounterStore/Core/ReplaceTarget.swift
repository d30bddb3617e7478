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

    /// Whether a batch row sink keeps `row` (of a subject of `kind`): throws for a row outside the
    /// target's hours or with an invalid id or plays; false for a row whose every signal is 0,
    /// which adds nothing.
    func admits(_ row: CountRow, of kind: SubjectKind) throws -> Bool {
        let subject = Subject(kind, row.id)
        guard coverage.contains(row.hour) else {
            throw CounterStoreError.rowOutsideRange(subject, hour: row.hour, range: coverage.ranges[0])
        }
        try RowRule.check(subject, hour: row.hour, plays: row.plays)
        return !row.counts.isZero
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
