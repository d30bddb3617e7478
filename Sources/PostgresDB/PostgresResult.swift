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

    /// The `bytea` in (row, column) as bytes; empty for NULL.
    public func bytes(row: Int, column: Int) -> [UInt8] {
        withBytes(row: row, column: column) { Array($0) }
    }

    /// Calls `body` with the bytes of the `bytea` in (row, column) (empty for NULL), decoded
    /// from the hex text (`\x0a1b…`) straight out of libpq's buffer. Text that is not hex — a
    /// session with `bytea_output = escape` — goes through libpq's own unescaping.
    public func withBytes<T>(row: Int, column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard let text = PQgetvalue(handle, Int32(row), Int32(column)), length > 0 else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try UnsafeRawPointer(text).withMemoryRebound(to: UInt8.self, capacity: length) { hex in
            if length >= 2, hex[0] == UInt8(ascii: "\\"), hex[1] == UInt8(ascii: "x"), length % 2 == 0,
               let decoded = Self.decodeHex(UnsafeBufferPointer(start: hex + 2, count: length - 2)) {
                return try decoded.withUnsafeBytes(body)
            }
            var count = 0
            guard let unescaped = PQunescapeBytea(hex, &count) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            defer { PQfreemem(unescaped) }
            return try body(UnsafeRawBufferPointer(start: unescaped, count: count))
        }
    }

    /// Pairs of hex digits as bytes; nil when a byte is not a hex digit.
    private static func decodeHex(_ hex: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var valid = true
        let bytes = [UInt8](unsafeUninitializedCapacity: hex.count / 2) { buffer, initialized in
            for index in 0..<hex.count / 2 {
                guard let high = PostgresHex.value(hex[2 * index]), let low = PostgresHex.value(hex[2 * index + 1]) else {
                    valid = false
                    break
                }
                buffer[index] = high << 4 | low
            }
            initialized = valid ? hex.count / 2 : 0
        }
        return valid ? bytes : nil
    }

    /// The integer in column 0 of row 0, nil when there is no row or it is NULL.
    public var singleInt64: Int64? {
        rowCount > 0 ? optionalInt64(row: 0, column: 0) : nil
    }
}

@available(*, unavailable)
extension PostgresResult: Sendable {}
