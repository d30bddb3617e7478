import CounterpointCore

/// A value bound to a statement parameter.
enum SQLValue {
    case integer(Int64)
    case text(String)
    case null

    init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    init(_ value: Int) { self = .integer(Int64(value)) }
}

/// One row of a query's result, read by column (from 0).
protocol SQLRow {
    func int64(at column: Int) -> Int64
    func optionalInt64(at column: Int) -> Int64?
    func string(at column: Int) -> String
    /// The bytes of a blob column (empty for NULL), valid inside `body` only.
    func withBytes<T>(at column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T
}

/// What the store's one core asks of an engine, inside one of its transactions: the small
/// interface each backend (SQLite, PostgreSQL) implements once, so that the batch
/// replacement, the rollups, the run, coverage and source records and the realtime rows are
/// written once over it.
///
/// The core writes statements with `$n` parameters and `ON CONFLICT … DO UPDATE` upserts
/// naming the target table's columns through `excluded`, a form both engines accept; the
/// dialect maps the parameters to its own (`?n` for SQLite). Column types and the migrations
/// stay with each dialect's schema.
protocol StoreDialect: AnyObject {
    associatedtype Row: SQLRow

    /// Runs a statement that returns no rows.
    func run(_ sql: String, _ values: [SQLValue]) throws
    /// Runs a query, calling `row` for each row of its result.
    func query(_ sql: String, _ values: [SQLValue], _ row: (Row) throws -> Void) throws
    /// Runs an INSERT, UPDATE or DELETE and returns the number of rows it changed (without
    /// sending them back, as `RETURNING` would).
    func changedRows(_ sql: String, _ values: [SQLValue]) throws -> Int

    /// The clause ending a SELECT that locks the rows it reads until the transaction ends, so that
    /// another writer reading them waits: `FOR UPDATE` where writers run concurrently; empty
    /// where the write transaction already holds the database's one write lock.
    static var rowLockClause: String { get }

    /// The bulk load: adds `rows` to their table — plays add up, payloads merge
    /// (`BlobMerge`), keys the table lacks are inserted — inside the caller's transaction.
    func add(_ rows: CounterRows) throws
}

extension StoreDialect {
    func run(_ sql: String, _ values: SQLValue...) throws { try run(sql, values) }

    /// The first column of the first row as an integer; nil without a row or for NULL.
    func singleInt64(_ sql: String, _ values: [SQLValue] = []) throws -> Int64? {
        var value: Int64?
        var first = true
        try query(sql, values) { row in
            if first { value = row.optionalInt64(at: 0) }
            first = false
        }
        return value
    }
}

/// The one validity rule of every counter row both layers take: a subject id of at least 1 and
/// plays that are not negative (the signals with retractions may be: SPEC §11).
enum RowRule {
    static func check(_ subject: Subject, hour: Hour, plays: Int64) throws {
        guard subject.id >= 1, plays >= 0 else { throw CounterStoreError.invalidRow(subject, hour: hour, plays: plays) }
    }
}
