/// A value bound to a statement parameter, in PostgreSQL's text format (libpq sends text
/// parameters and the server parses them with the type it inferred or the SQL casts to, e.g.
/// `$1::bigint[]`). `nil` text is SQL NULL.
///
/// A type may also have a binary form (`postgresBinary`, PostgreSQL's send/receive format of
/// the parameter's type), sent instead of the text: for bulk values it spares formatting the
/// text on this side and parsing it on the server's.
public protocol PostgresParameter {
    var postgresText: String? { get }
    var postgresBinary: [UInt8]? { get }
}

extension PostgresParameter {
    public var postgresBinary: [UInt8]? { nil }
}

extension Int64: PostgresParameter {
    public var postgresText: String? { String(self) }
}

extension Int: PostgresParameter {
    public var postgresText: String? { String(self) }
}

extension Int32: PostgresParameter {
    public var postgresText: String? { String(self) }
}

extension String: PostgresParameter {
    public var postgresText: String? { self }
}

extension Bool: PostgresParameter {
    public var postgresText: String? { self ? "t" : "f" }
}

extension Optional: PostgresParameter where Wrapped: PostgresParameter {
    public var postgresText: String? { self?.postgresText }
}

/// A one-dimensional `bigint[]`: the shape `unnest($1::bigint[], …)` takes, which turns one
/// parameter per column into one statement for any number of rows. Sent in binary (the
/// parameter's type must be `bigint[]`: cast it so in the SQL); `postgresText` is its literal,
/// `{1,2,NULL}`.
public struct PostgresInt64Array: PostgresParameter {
    private let values: [Int64?]

    public init(_ values: some Collection<Int64>) {
        self.values = values.map { $0 }
    }

    /// nil elements are SQL NULL.
    public init(_ values: some Collection<Int64?>) {
        self.values = Array(values)
    }

    public var postgresText: String? {
        "{" + values.map { $0.map { String($0) } ?? "NULL" }.joined(separator: ",") + "}"
    }

    /// `array_recv`'s format: dimensions, a has-nulls flag, the element type (int8, OID 20), the
    /// length and lower bound of the one dimension, then each element as its length (8, or -1
    /// for NULL) and its big-endian value.
    public var postgresBinary: [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + values.count * 12)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        // An empty array has no dimensions at all.
        append(Int32(values.isEmpty ? 0 : 1))
        append(Int32(values.contains(nil) ? 1 : 0))
        append(UInt32(20))
        guard !values.isEmpty else { return bytes }
        append(Int32(values.count))
        append(Int32(1))
        for value in values {
            if let value {
                append(Int32(8))
                append(value)
            } else {
                append(Int32(-1))
            }
        }
        return bytes
    }
}
