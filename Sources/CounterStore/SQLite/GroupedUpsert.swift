import SQLiteDB

/// Writes rows through `INSERT … VALUES (…), (…), …` statements of `rowsPerStatement` rows,
/// and the remainder one row at a time: the bulk load of the SQLite dialect.
///
/// Stepping one statement per row costs about as much as the b-tree work of the row itself;
/// groups of 64 spread that cost (a fresh batch run goes from ~0.7 M to ~1.0 M rows/s).
struct GroupedUpsert {
    static let rowsPerStatement = 64

    private let group: Statement
    private let single: Statement
    private let columns: Int

    /// `makeSQL(valuesList)` returns the statement around a VALUES list of rows of `columns`
    /// parameters each.
    init(_ database: Database, columns: Int, makeSQL: (_ valuesList: String) -> String) throws {
        func values(rows: Int) -> String {
            (0..<rows).map { row in
                let first = 1 + columns * row
                return "(" + (first..<first + columns).map { "?\($0)" }.joined(separator: ", ") + ")"
            }.joined(separator: ", ")
        }
        self.columns = columns
        group = try database.cachedStatement(makeSQL(values(rows: Self.rowsPerStatement)))
        single = try database.cachedStatement(makeSQL(values(rows: 1)))
    }

    /// `bind(statement, row, firstParameter)` binds the `columns` values of `row` from
    /// `firstParameter` on. Blobs may be bound without a copy (`bind(borrowing:)`) if they
    /// outlive this call: every statement has run when it returns, and its bindings are cleared.
    func write<Rows: Collection>(_ rows: Rows, bind: (Statement, Rows.Element, Int) throws -> Void) throws {
        defer {
            group.clearBindings()
            single.clearBindings()
        }
        var pending = 0
        var remainder = rows.startIndex
        for index in rows.indices {
            try bind(group, rows[index], 1 + columns * pending)
            pending += 1
            if pending == Self.rowsPerStatement {
                try group.execute()
                pending = 0
                remainder = rows.index(after: index)
            }
        }
        for element in rows[remainder...] {
            try bind(single, element, 1)
            try single.execute()
        }
    }
}
