import CounterpointCore
import PostgresDB

/// The PostgreSQL dialect of the store's core (`StoreDialect`), over one connection inside its
/// transaction: `$n` parameters sent as text, results read whole, and `PostgresCounterWrite`
/// (arrays through `unnest`, blobs merged here under row locks) as the bulk load.
final class PostgresDialect: StoreDialect {
    let db: PostgresConnection
    /// Rows per statement of the bulk load (a handful of array parameters each).
    let chunkRows: Int
    /// True inside a batch replacement, which holds the batch writer lock: no other transaction
    /// writes the batch tables until it ends (`PostgresCounterWrite.soleWriter`).
    let soleWriter: Bool

    init(_ db: PostgresConnection, chunkRows: Int = 200_000, soleWriter: Bool = false) {
        self.db = db
        self.chunkRows = chunkRows
        self.soleWriter = soleWriter
    }

    private func parameters(_ values: [SQLValue]) -> [any PostgresParameter] {
        values.map { value -> any PostgresParameter in
            switch value {
            case let .integer(integer): integer
            case let .text(text): text
            case .null: Int64?.none
            }
        }
    }

    func run(_ sql: String, _ values: [SQLValue]) throws {
        try db.query(sql, parameters(values))
    }

    func query(_ sql: String, _ values: [SQLValue], _ row: (PostgresRow) throws -> Void) throws {
        let result = try db.query(sql, parameters(values))
        for index in 0..<result.rowCount {
            try row(PostgresRow(result: result, row: index))
        }
    }

    func changedRows(_ sql: String, _ values: [SQLValue]) throws -> Int {
        try db.query(sql, parameters(values)).affectedRows
    }

    /// Writers of the realtime layer run concurrently, each in a READ COMMITTED transaction.
    static let rowLockClause = "FOR UPDATE"

    func add(_ rows: CounterRows) throws {
        try PostgresCounterWrite(counters: rows, db: db, soleWriter: soleWriter).write(chunkRows: chunkRows)
    }
}

@available(*, unavailable)
extension PostgresDialect: Sendable {}

/// One row of a `PostgresResult`.
struct PostgresRow: SQLRow {
    let result: PostgresResult
    let row: Int

    func int64(at column: Int) -> Int64 { result.int64(row: row, column: column) }
    func optionalInt64(at column: Int) -> Int64? { result.optionalInt64(row: row, column: column) }
    func string(at column: Int) -> String { result.string(row: row, column: column) }
    func withBytes<T>(at column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try result.withBytes(row: row, column: column, body)
    }
}
