import CSQLite

/// A compiled SQL statement of one connection. Not `Sendable`: it belongs to its connection's
/// thread. Parameters are bound by 1-based index, columns read by 0-based index, as in SQLite.
public final class Statement {
    @usableFromInline let handle: OpaquePointer
    private let connection: OpaquePointer
    public let sql: String

    init(connection: OpaquePointer, sql: String, persistent: Bool) throws {
        self.connection = connection
        self.sql = sql
        var statement: OpaquePointer?
        // "SQLITE_PREPARE_PERSISTENT is a hint to the query planner that the prepared statement
        // will be retained for a long time and probably reused many times" — SQLite then keeps
        // it out of the small lookaside memory pool meant for short-lived allocations.
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sqlite3_prepare_v3(connection, sql, -1, flags, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw makeError(code == SQLITE_OK ? SQLITE_MISUSE : code, connection,
                            code == SQLITE_OK ? "prepare (no statement in SQL): \(sql)" : sql)
        }
        handle = statement
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: Binding

    @inlinable
    public func bind(_ value: Int64, at index: Int) throws {
        let code = sqlite3_bind_int64(handle, Int32(index), value)
        if code != SQLITE_OK { throw bindFailed(code) }
    }

    @usableFromInline
    func bindFailed(_ code: Int32) -> SQLiteError {
        makeError(code, connection, sql)
    }

    public func bind(_ value: Int, at index: Int) throws {
        try bind(Int64(value), at: index)
    }

    public func bind(_ value: Double, at index: Int) throws {
        try check(sqlite3_bind_double(handle, Int32(index), value), connection, sql)
    }

    public func bind(_ value: String, at index: Int) throws {
        var text = value
        // SQLITE_TRANSIENT: SQLite copies the bytes, so the buffer may go after the call.
        let code = text.withUTF8 { bytes in
            // An empty buffer may have no address, and a NULL pointer would bind SQL NULL.
            bytes.isEmpty
                ? sqlite3_bind_text(handle, Int32(index), "", 0, counterpoint_sqlite_transient())
                : sqlite3_bind_text(handle, Int32(index), bytes.baseAddress, Int32(bytes.count), counterpoint_sqlite_transient())
        }
        try check(code, connection, sql)
    }

    public func bind(bytes value: [UInt8], at index: Int) throws {
        try value.withUnsafeBytes { try bind(bytes: $0, at: index) }
    }

    /// Binds a copy of `buffer` (SQLITE_TRANSIENT), so it need not outlive the call.
    public func bind(bytes buffer: UnsafeRawBufferPointer, at index: Int) throws {
        let code = sqlite3_bind_blob(handle, Int32(index), buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                     Int32(buffer.count), counterpoint_sqlite_transient())
        try check(code, connection, sql)
    }

    /// Binds `buffer` without a copy (SQLITE_STATIC): SQLite reads it when the statement runs,
    /// so it must stay valid and unchanged until then. Bulk writes use it to spare a malloc and a
    /// copy per blob; `clearBindings()` afterwards leaves no pointer behind.
    public func bind(borrowing buffer: UnsafeRawBufferPointer, at index: Int) throws {
        let code = sqlite3_bind_blob(handle, Int32(index), buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                     Int32(buffer.count), nil)
        try check(code, connection, sql)
    }

    public func bindNull(at index: Int) throws {
        try check(sqlite3_bind_null(handle, Int32(index)), connection, sql)
    }

    /// Binds `value`, or SQL NULL when it is nil.
    public func bind(_ value: Int64?, at index: Int) throws {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    // MARK: Stepping

    /// Advances to the next row: true when a row is available, false when the statement is done.
    /// On failure the statement is reset (releasing its locks) and the error thrown.
    @discardableResult @inlinable
    public func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw stepFailed(code)
    }

    @usableFromInline
    func stepFailed(_ code: Int32) -> SQLiteError {
        let error = makeError(code, connection, sql)
        sqlite3_reset(handle)
        return error
    }

    /// Makes the statement ready to run again. Outside an explicit transaction a statement that
    /// stopped before its last row keeps its read snapshot until it is reset, so reset early.
    @inlinable
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Steps until done (for statements that return no rows), then resets.
    public func execute() throws {
        defer { reset() }
        while try step() {}
    }

    /// Steps through every row, calling `body` for each with the statement positioned on it,
    /// and resets at the end (also when `body` throws).
    @inlinable
    public func forEachRow(_ body: (Statement) throws -> Void) throws {
        defer { reset() }
        while try step() { try body(self) }
    }

    /// The first column of the first row as an integer (nil without rows or for NULL); resets.
    public func singleInt64() throws -> Int64? {
        defer { reset() }
        guard try step(), !isNull(at: 0) else { return nil }
        return int64(at: 0)
    }

    /// The first column of the first row as text (nil without rows or for NULL); resets.
    public func singleString() throws -> String? {
        defer { reset() }
        guard try step(), !isNull(at: 0) else { return nil }
        return string(at: 0)
    }

    // MARK: Columns of the current row

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    @inlinable
    public func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    @inlinable
    public func int64(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(index))
    }

    public func int(at index: Int) -> Int {
        Int(sqlite3_column_int64(handle, Int32(index)))
    }

    public func optionalInt64(at index: Int) -> Int64? {
        isNull(at: index) ? nil : int64(at: index)
    }

    public func double(at index: Int) -> Double {
        sqlite3_column_double(handle, Int32(index))
    }

    public func string(at index: Int) -> String {
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The blob of column `index` without copying it; the bytes are valid only inside `body`.
    public func withBytes<T>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        guard let blob = sqlite3_column_blob(handle, Int32(index)) else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(handle, Int32(index)))))
    }

    public func bytes(at index: Int) -> [UInt8] {
        // sqlite3_column_blob before sqlite3_column_bytes, as SQLite's documentation advises.
        guard let blob = sqlite3_column_blob(handle, Int32(index)) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }
}

/// A statement belongs to the thread of its connection.
@available(*, unavailable)
extension Statement: Sendable {}
