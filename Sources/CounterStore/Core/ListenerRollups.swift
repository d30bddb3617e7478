import CounterpointCore

/// The (track, day)s and (track, month)s whose listener sketches a batch replacement made
/// stale: a union cannot be subtracted, so when replaced hours held a track's sketch, that
/// track's day sketch is rebuilt from its hours and its month sketch from its days, in the
/// replacement's transaction, after the new hours are in. A first run over new hours has
/// nothing stale (new sketches unite into the rollups exactly), so the rebuild costs nothing
/// then.
///
/// Nor has a rerun whose new hour holds every listener the replaced one held — a late file
/// adds events, it takes none away: when the union of a replaced hour's sketch with its new
/// sketch is the new sketch, the day and month that held the old one plus the new one are
/// exactly what a rebuild would give, since a sketch is a function of the set of hashes it has
/// seen. So the replaced sketches are kept (up to `keptBytesLimit`) and each new row that holds
/// its old one settles its (track, hour); only the rest are rebuilt, from the rows of just their
/// tracks, through the (track, bucket) key — never the other tracks of the day or month.
/// A late file in one hour thus costs what that hour holds, whatever the history's length
/// (docs/performance.md).
final class ListenerRollups {
    /// Whose rollups these are.
    let kind: SubjectKind

    init(_ kind: SubjectKind) { self.kind = kind }

    private struct Replaced {
        var piece: RollupPiece
        var sketch: Range<Int>
    }

    private var tracksByDay: [Int64: Set<Int64>] = [:]
    private var tracksByMonth: [Int64: Set<Int64>] = [:]
    /// The replaced (track, hour)s whose sketches no new row has been seen to hold yet, their
    /// sketches back to back in `kept`; nil once they outgrew `keptBytesLimit` (then all of them
    /// are rebuilt).
    private var replaced: [Key: Replaced]? = [:]
    private var kept: [UInt8] = []
    private var union: [UInt8] = []

    private struct Key: Hashable {
        var trackID: Int64
        var hour: Int64
    }

    /// Replaced sketches kept for the comparison at most: an hour's rows (a few MB) and more,
    /// but not a rerun of months.
    static let keptBytesLimit = 64 << 20

    /// Tracks read by one statement: `track_id IN (…)` with this many parameters (the last id
    /// repeated to fill a short chunk), so that every read is one cached statement.
    static let tracksPerRead = 64

    /// A replaced hour row of `trackID` in `piece` held `sketch` (not empty).
    func noteReplaced(trackID: Int64, hour: Hour, sketch: UnsafeRawBufferPointer, piece: RollupPiece) {
        if replaced != nil, kept.count + sketch.count <= Self.keptBytesLimit {
            let start = kept.count
            kept.append(contentsOf: sketch)
            replaced![Key(trackID: trackID, hour: hour.index)] = Replaced(piece: piece, sketch: start..<kept.count)
            return
        }
        if let all = replaced {
            for (key, entry) in all { markStale(trackID: key.trackID, piece: entry.piece) }
            replaced = nil
            kept = []
        }
        markStale(trackID: trackID, piece: piece)
    }

    /// A new row of (track, hour) holds `sketch`: if that holds every listener of the replaced
    /// row, the replaced row needs no rebuild of its day and month.
    func noteNew(trackID: Int64, hour: Hour, sketch: UnsafeRawBufferPointer) {
        // Every row of a batch passes here; a first run over new hours replaced nothing.
        guard !sketch.isEmpty, replaced?.isEmpty == false else { return }
        let key = Key(trackID: trackID, hour: hour.index)
        guard let entry = replaced?[key] else { return }
        let holdsOld = kept.withUnsafeBytes { kept in
            BlobMerge.unite(UnsafeRawBufferPointer(rebasing: kept[entry.sketch]), sketch, into: &union)
                && union.elementsEqual(sketch)
        }
        if holdsOld { replaced![key] = nil }
    }

    private func markStale(trackID: Int64, piece: RollupPiece) {
        tracksByDay[piece.day, default: []].insert(trackID)
        tracksByMonth[piece.month, default: []].insert(trackID)
    }

    func rebuild<D: StoreDialect>(_ db: D) throws {
        for (key, entry) in replaced ?? [:] { markStale(trackID: key.trackID, piece: entry.piece) }
        replaced = [:]
        kept = []
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
        let table = Catalogue.batch(source, kind)
        let count = Self.tracksPerRead
        let sql = """
            SELECT \(table.idColumn), listeners FROM \(table.name)
            WHERE \(table.idColumn) IN (\((0..<count).map { "$\($0 + 3)" }.joined(separator: ", ")))
            AND \(table.keys.second) >= $1 AND \(table.keys.second) < $2 AND listeners IS NOT NULL
            """
        let sorted = tracks.sorted()
        var rows = CounterRows(Catalogue.batch(level, kind), replacesListeners: true)
        for start in stride(from: 0, to: sorted.count, by: count) {
            let chunk = sorted[start..<min(start + count, sorted.count)]
            let ids = chunk.map { SQLValue.integer($0) } + Array(repeating: .integer(chunk.last!), count: count - chunk.count)
            var unions: [Int64: SketchUnion] = [:]
            try db.query(sql, [.integer(lower), .integer(upper)] + ids) { row in
                let id = row.int64(at: 0)
                try row.withBytes(at: 1) { try unions[id, default: SketchUnion(Subject(kind, id))].add(0, $0) }
            }
            for id in chunk {
                let encoded = unions[id].map(\.sketch.encoded) ?? []
                try encoded.withUnsafeBytes { try rows.append(id, key, plays: 0, dimensions: CounterRows.noBlob, listeners: $0) }
            }
        }
        try db.add(rows)
    }
}

@available(*, unavailable)
extension ListenerRollups: Sendable {}
