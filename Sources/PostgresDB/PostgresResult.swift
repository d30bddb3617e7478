import CPostgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The rows of one statement, in text format. It owns its `PGresult*` and clears it in `deinit`.
/// Not `Sendable`: read it on the thread that ran the statement.
public final class PostgresResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { PQclear(handle) }

    public var rowCount: Int { Int(PQntuples(handle)) }
    public var columnCount: Int { Int(PQnfields(handle)) }
    /// The rows a data-modifying statement changed (`PQcmdTuples`), 0 when not applicable.
    public var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    public func isNull(row: Int, column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// The integer in (row, column); 0 for NULL (check `isNull` or use `optionalInt64`).
    public func int64(row: Int, column: Int) -> Int64 {
        // Parsed straight from libpq's buffer: no String is made for the hot read path.
        guard let text = PQgetvalue(handle, Int32(row), Int32(column)) else { return 0 }
        return strtoll(text, nil, 10)
    }

    public func optionalInt64(row: Int, column: Int) -> Int64? {
        isNull(row: row, column: column) ? nil : int64(row: row, column: column)
    }

    public func string(row: Int, column: Int) -> String {
        guard let text = PQgetvalue(handle, Int32(row), Int32(column)) else { return "" }
        return String(cString: text)
    }

    /// The integer in column 0 of row 0, nil when there is no row or it is NULL.
    public var singleInt64: Int64? {
        rowCount > 0 ? optionalInt64(row: 0, column: 0) : nil
    }
}

@available(*, unavailable)
extension PostgresResult: Sendable {}
