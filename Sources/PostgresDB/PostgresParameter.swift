/// A value bound to a statement parameter, in PostgreSQL's text format (libpq sends text
/// parameters and the server parses them with the type it inferred or the SQL casts to, e.g.
/// `$1::bigint[]`). `nil` text is SQL NULL.
public protocol PostgresParameter {
    var postgresText: String? { get }
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

/// A one-dimensional `bigint[]` literal, `{1,2,3}`: the shape `unnest($1::bigint[], …)` takes,
/// which turns one parameter per column into one statement for any number of rows.
public struct PostgresInt64Array: PostgresParameter {
    public var values: [Int64]

    public init(_ values: [Int64]) { self.values = values }

    public var postgresText: String? {
        var text = "{"
        text.reserveCapacity(values.count * 8 + 2)
        for (index, value) in values.enumerated() {
            if index > 0 { text.append(",") }
            text.append(String(value))
        }
        text.append("}")
        return text
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
