import CounterpointCore

/// The (track, day)s and (track, month)s whose listener sketches a batch replacement made
/// stale: a union cannot be subtracted, so when replaced hours held a track's sketch, that
/// track's day sketch is rebuilt from its hours and its month sketch from its days, in the
/// replacement's transaction, after the new hours are in. A first run over new hours has
/// nothing stale (new sketches unite into the rollups exactly), so the rebuild costs nothing
/// then; a rerun reads the rows of just the tracks it touched, through the (track, bucket)
/// key — never the other tracks of the day or month, so a late file in one hour costs what
/// that hour's tracks hold, whatever the length of the history (docs/performance.md).
struct ListenerRollups {
    private var tracksByDay: [Int64: Set<Int64>] = [:]
    private var tracksByMonth: [Int64: Set<Int64>] = [:]

    /// Tracks read by one statement: `track_id IN (…)` with this many parameters (the last id
    /// repeated to fill a short chunk), so that every read is one cached statement.
    static let tracksPerRead = 64

    mutating func insert(trackID: Int64, piece: RollupPiece) {
        tracksByDay[piece.day, default: []].insert(trackID)
        tracksByMonth[piece.month, default: []].insert(trackID)
    }

    func rebuild<D: StoreDialect>(_ db: D) throws {
        for (day, tracks) in tracksByDay.sorted(by: { $0.key < $1.key }) {
            let first = RollupLevel.day.firstHour(ofKey: day).index
            try rebuild(.day, key: day, tracks: tracks, from: .hour, lower: first, upper: first + 24, db)
        }
        for (month, tracks) in tracksByMonth.sorted(by: { $0.key < $1.key }) {
            let firstDay = RollupLevel.month.firstHour(ofKey: month).index / 24
            let nextDay = RollupLevel.month.firstHour(ofKey: month + 1).index / 24
            try rebuild(.month, key: month, tracks: tracks, from: .day, lower: firstDay, upper: nextDay, db)
        }
    }

    /// Sets the sketch of each of `tracks` in bucket `key` of `level` to the union of its
    /// sketches in the `source` rows [lower, upper) (none: NULL), `tracksPerRead` tracks at a time.
    private func rebuild<D: StoreDialect>(_ level: RollupLevel, key: Int64, tracks: Set<Int64>, from source: RollupLevel,
                                          lower: Int64, upper: Int64, _ db: D) throws {
        let table = Catalogue.batch(source)
        let count = Self.tracksPerRead
        let sql = """
            SELECT track_id, listeners FROM \(table.name)
            WHERE track_id IN (\((0..<count).map { "$\($0 + 3)" }.joined(separator: ", ")))
            AND \(table.keys.second) >= $1 AND \(table.keys.second) < $2 AND listeners IS NOT NULL
            """
        let sorted = tracks.sorted()
        var rows = CounterRows(Catalogue.batch(level), replacesListeners: true)
        for start in stride(from: 0, to: sorted.count, by: count) {
            let chunk = sorted[start..<min(start + count, sorted.count)]
            let ids = chunk.map { SQLValue.integer($0) } + Array(repeating: .integer(chunk.last!), count: count - chunk.count)
            var unions: [Int64: SketchUnion] = [:]
            try db.query(sql, [.integer(lower), .integer(upper)] + ids) { row in
                let trackID = row.int64(at: 0)
                try row.withBytes(at: 1) { try unions[trackID, default: SketchUnion(trackID: trackID)].add(0, $0) }
            }
            for trackID in chunk {
                let encoded = unions[trackID].map(\.sketch.encoded) ?? []
                try encoded.withUnsafeBytes { try rows.append(trackID, key, plays: 0, dimensions: CounterRows.noBlob, listeners: $0) }
            }
        }
        try db.add(rows)
    }
}
