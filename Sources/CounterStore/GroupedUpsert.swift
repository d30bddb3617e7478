import SQLiteDB

/// Writes (hour, track, plays) rows — or (hour, track, plays, blob) rows with `withBlob` — through
/// `INSERT … VALUES (…), (…), …` statements of `rowsPerStatement` rows, and the remainder one
/// row at a time.
///
/// Stepping one statement per row costs about as much as the b-tree work of the row itself;
/// groups of 64 spread that cost (a fresh batch run goes from ~0.7 M to ~1.0 M rows/s).
struct GroupedUpsert {
    static let rowsPerStatement = 64

    private let group: Statement
    private let single: Statement
    private let firstRowParameter: Int
    private let columns: Int

    /// `makeSQL(valuesList)` returns the statement around a VALUES list whose rows bind
    /// (hour, track_id, plays) from parameter `firstRowParameter` on; parameters before it are
    /// the caller's, bound with `bindShared`.
    init(_ database: Database, firstRowParameter: Int, rowSuffix: String = "", withBlob: Bool = false,
         makeSQL: (_ valuesList: String) -> String, bindShared: (Statement) throws -> Void = { _ in }) throws {
        let columns = withBlob ? 4 : 3
        func values(rows: Int) -> String {
            (0..<rows).map { row in
                let first = firstRowParameter + columns * row
                return "(" + (first..<first + columns).map { "?\($0)" }.joined(separator: ", ") + "\(rowSuffix))"
            }.joined(separator: ", ")
        }
        self.columns = columns
        group = try database.cachedStatement(makeSQL(values(rows: Self.rowsPerStatement)))
        single = try database.cachedStatement(makeSQL(values(rows: 1)))
        self.firstRowParameter = firstRowParameter
        try bindShared(group)
        try bindShared(single)
    }

    /// `blob(row, bind)` calls `bind` with the row's blob (for `withBlob`), so that the bytes
    /// can come from scoped storage.
    func write<Rows: Collection>(_ rows: Rows, _ values: (Rows.Element) -> (hour: Int64, trackID: Int64, plays: Int64),
                                 blob: (Rows.Element, (UnsafeRawBufferPointer) throws -> Void) throws -> Void = { _, _ in }) throws {
        var pending = 0
        var remainder = rows.startIndex
        for index in rows.indices {
            let row = values(rows[index])
            let parameter = firstRowParameter + columns * pending
            try group.bind(row.hour, at: parameter)
            try group.bind(row.trackID, at: parameter + 1)
            try group.bind(row.plays, at: parameter + 2)
            if columns == 4 { try blob(rows[index]) { try Self.bind($0, group, at: parameter + 3) } }
            pending += 1
            if pending == Self.rowsPerStatement {
                try group.execute()
                pending = 0
                remainder = rows.index(after: index)
            }
        }
        for element in rows[remainder...] {
            let row = values(element)
            try single.bind(row.hour, at: firstRowParameter)
            try single.bind(row.trackID, at: firstRowParameter + 1)
            try single.bind(row.plays, at: firstRowParameter + 2)
            if columns == 4 { try blob(element) { try Self.bind($0, single, at: firstRowParameter + 3) } }
            try single.execute()
        }
    }

    /// An empty blob is stored as NULL: the same one header byte, and "nothing" either way.
    private static func bind(_ blob: UnsafeRawBufferPointer, _ statement: Statement, at index: Int) throws {
        if blob.isEmpty { try statement.bindNull(at: index) } else { try statement.bind(bytes: blob, at: index) }
    }
}
