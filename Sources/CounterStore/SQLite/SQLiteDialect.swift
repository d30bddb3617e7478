import CounterpointCore
import SQLiteDB

/// The SQLite dialect of the store's core (`StoreDialect`), over one connection inside its
/// transaction: `?n` parameters, cached prepared statements, `GroupedUpsert` as the bulk load,
/// and the blob merge as an SQL function the upserts call. Not `Sendable`, like its connection.
final class SQLiteDialect: StoreDialect {
    /// The SQL functions that merge two blobs of a payload (`BlobMerge`), registered on every
    /// writer connection for the upserts.
    static func mergeFunction(_ payload: Payload) -> String {
        switch payload {
        case .dimensions: "counterpoint_merge_dimensions"
        case .listeners: "counterpoint_union_listeners"
        }
    }

    let db: Database

    init(_ db: Database) { self.db = db }

    static func defineMergeFunctions(_ database: Database) throws {
        for (payload, failure) in [(Payload.dimensions, "malformed dimension counts"), (.listeners, "malformed listener sketch")] {
            try database.defineBlobFunction(mergeFunction(payload), failureMessage: failure) { first, second, out in
                BlobMerge.merge(payload, first, second, into: &out)
            }
        }
    }

    /// The core's `$n` parameters as SQLite's `?n`.
    private func statement(_ sql: String) throws -> Statement {
        try db.cachedStatement(sql.replacingOccurrences(of: "$", with: "?"))
    }

    private func bind(_ values: [SQLValue], _ statement: Statement) throws {
        for (offset, value) in values.enumerated() {
            switch value {
            case let .integer(integer): try statement.bind(integer, at: offset + 1)
            case let .text(text): try statement.bind(text, at: offset + 1)
            case .null: try statement.bindNull(at: offset + 1)
            }
        }
    }

    func run(_ sql: String, _ values: [SQLValue]) throws {
        let statement = try statement(sql)
        try bind(values, statement)
        try statement.execute()
    }

    func query(_ sql: String, _ values: [SQLValue], _ row: (Statement) throws -> Void) throws {
        let statement = try statement(sql)
        try bind(values, statement)
        try statement.forEachRow(row)
    }

    func changedRows(_ sql: String, _ values: [SQLValue]) throws -> Int {
        try run(sql, values)
        return db.changes
    }

    /// None: a write transaction (`BEGIN IMMEDIATE`) holds the file's one write lock throughout.
    static let rowLockClause = ""

    func add(_ rows: CounterRows) throws {
        guard !rows.isEmpty else { return }
        let table = rows.table
        let (first, second) = table.keys
        // A NULL adds nothing (and costs no merge); a sketch replaces the stored one in a rebuild.
        func merged(_ payload: Payload) -> String {
            let column = payload.column
            return "CASE WHEN excluded.\(column) IS NULL THEN \(column) ELSE \(Self.mergeFunction(payload))(\(column), excluded.\(column)) END"
        }
        let listenersUpdate = rows.replacesListeners ? "excluded.listeners" : merged(.listeners)
        // Every table of both layers keeps every signal and the payloads in columns of one row.
        // Rows of plays alone leave the other signals' columns to their default, 0, unbound.
        let others = rows.counts.hasOtherSignals
        let signals = others ? Catalogue.signalColumns : [Signal.plays.rawValue]
        let columns = [first, second] + signals + ["dimensions", "listener_plays", "listeners"]
        let sums = (signals + ["listener_plays"]).map { "\($0) = \($0) + excluded.\($0)" }.joined(separator: ", ")
        let upsert = try GroupedUpsert(db, columns: columns.count) { values in
            """
            INSERT INTO \(table.name) (\(columns.joined(separator: ", "))) VALUES \(values)
            ON CONFLICT (\(first), \(second)) DO UPDATE SET \(sums), dimensions = \(merged(.dimensions)),
                listeners = \(listenersUpdate)
            """
        }
        let payloadColumn = 2 + signals.count
        try rows.dimensions.withBlobs { blob in
            try rows.listeners.withBlobs { sketch in
                try upsert.write(rows.indices.lazy.filter { rows.hasContent($0) }) { statement, row, at in
                    try statement.bind(rows.firstKeys[row], at: at)
                    try statement.bind(rows.secondKeys[row], at: at + 1)
                    if others {
                        let counts = rows.counts[row]
                        for (offset, signal) in Signal.allCases.enumerated() {
                            try statement.bind(counts[signal], at: at + 2 + offset)
                        }
                    } else {
                        try statement.bind(rows.counts.plays(of: row), at: at + 2)
                    }
                    try Self.bind(blob(row), statement, at: at + payloadColumn)
                    try statement.bind(rows.listenerPlays[row], at: at + payloadColumn + 1)
                    try Self.bind(sketch(row), statement, at: at + payloadColumn + 2)
                }
            }
        }
    }

    /// An empty blob is stored as NULL: the same one header byte, and "nothing" either way.
    /// The others are bound without a copy: `rows` outlives the upsert (`GroupedUpsert.write`).
    private static func bind(_ blob: UnsafeRawBufferPointer, _ statement: Statement, at index: Int) throws {
        if blob.isEmpty { try statement.bindNull(at: index) } else { try statement.bind(borrowing: blob, at: index) }
    }
}

extension Statement: SQLRow {}
