import SQLiteDB

/// Writes (hour, track, plays) rows through `INSERT … VALUES (…), (…), …` statements of
/// `rowsPerStatement` rows, and the remainder one row at a time.
///
/// Stepping one statement per row costs about as much as the b-tree work of the row itself;
/// groups of 64 spread that cost (a fresh batch run goes from ~0.7 M to ~1.0 M rows/s).
struct GroupedUpsert {
    static let rowsPerStatement = 64

    private let group: Statement
    private let single: Statement
    private let firstRowParameter: Int

    /// `makeSQL(valuesList)` returns the statement around a VALUES list whose rows bind
    /// (hour, track_id, plays) from parameter `firstRowParameter` on; parameters before it are
    /// the caller's, bound with `bindShared`.
    init(_ database: Database, firstRowParameter: Int, rowSuffix: String = "",
         makeSQL: (_ valuesList: String) -> String, bindShared: (Statement) throws -> Void = { _ in }) throws {
        func values(rows: Int) -> String {
            (0..<rows).map { row in
                let first = firstRowParameter + 3 * row
                return "(?\(first), ?\(first + 1), ?\(first + 2)\(rowSuffix))"
            }.joined(separator: ", ")
        }
        group = try database.cachedStatement(makeSQL(values(rows: Self.rowsPerStatement)))
        single = try database.cachedStatement(makeSQL(values(rows: 1)))
        self.firstRowParameter = firstRowParameter
        try bindShared(group)
        try bindShared(single)
    }

    func write<Rows: Collection>(_ rows: Rows, _ values: (Rows.Element) -> (hour: Int64, trackID: Int64, plays: Int64)) throws {
        var pending = 0
        var remainder = rows.startIndex
        for index in rows.indices {
            let row = values(rows[index])
            let parameter = firstRowParameter + 3 * pending
            try group.bind(row.hour, at: parameter)
            try group.bind(row.trackID, at: parameter + 1)
            try group.bind(row.plays, at: parameter + 2)
            pending += 1
            if pending == Self.rowsPerStatement {
                try group.execute()
                pending = 0
                remainder = rows.index(after: index)
            }
        }
        for row in rows[remainder...].lazy.map(values) {
            try single.bind(row.hour, at: firstRowParameter)
            try single.bind(row.trackID, at: firstRowParameter + 1)
            try single.bind(row.plays, at: firstRowParameter + 2)
            try single.execute()
        }
    }
}
