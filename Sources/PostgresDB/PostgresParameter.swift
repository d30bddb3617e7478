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

/// A one-dimensional `bytea[]` literal for `unnest(…, $n::bytea[])`: each element a
/// double-quoted hex bytea, `{"\\x0a1b",NULL}` (inside an array literal `\\` is one backslash,
/// so the element reads as `\x0a1b`). Built element by element straight into the text sent,
/// so large arrays of blobs cost one buffer, not one array per element.
public struct PostgresByteaArray: PostgresParameter {
    private var text: [UInt8] = [UInt8(ascii: "{")]
    public private(set) var count = 0

    public init() {}

    /// An array of `values`, each one element (an empty one is an empty bytea, not NULL).
    public init(_ values: [[UInt8]]) {
        for value in values { value.withUnsafeBytes { append($0) } }
    }

    /// Appends one element holding `bytes`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        startElement()
        text.append(contentsOf: #""\\x"#.utf8)
        for byte in bytes {
            text.append(PostgresHex.digit(byte >> 4))
            text.append(PostgresHex.digit(byte & 0x0F))
        }
        text.append(UInt8(ascii: "\""))
    }

    /// Appends a NULL element.
    public mutating func appendNull() {
        startElement()
        text.append(contentsOf: "NULL".utf8)
    }

    private mutating func startElement() {
        if count > 0 { text.append(UInt8(ascii: ",")) }
        count += 1
    }

    public var postgresText: String? {
        String(decoding: text, as: UTF8.self) + "}"
    }
}

/// One `bytea` value, as hex text (`\x0a1b`).
public struct PostgresBytea: PostgresParameter {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var postgresText: String? {
        var text: [UInt8] = Array(#"\x"#.utf8)
        text.reserveCapacity(2 + 2 * bytes.count)
        for byte in bytes {
            text.append(PostgresHex.digit(byte >> 4))
            text.append(PostgresHex.digit(byte & 0x0F))
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// bytea's hex text format, both ways.
enum PostgresHex {
    /// The lowercase hex digit of `nibble` (0…15).
    @inline(__always)
    static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }

    /// The value of one hex digit, nil for any other byte.
    @inline(__always)
    static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
