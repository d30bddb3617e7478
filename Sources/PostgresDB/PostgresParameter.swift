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

    /// `array_recv`'s format (see `PostgresBinaryArray`): each element its length (8, or -1
    /// for NULL) and its big-endian value.
    public var postgresBinary: [UInt8]? {
        var bytes = PostgresBinaryArray.header(elementType: PostgresBinaryArray.int8, count: values.count,
                                               hasNulls: values.contains(nil), reserving: values.count * 12)
        for value in values {
            if let value {
                PostgresBinaryArray.append(Int32(8), to: &bytes)
                PostgresBinaryArray.append(value, to: &bytes)
            } else {
                PostgresBinaryArray.append(Int32(-1), to: &bytes)
            }
        }
        return bytes
    }
}

/// PostgreSQL's binary form of a one-dimensional array (`array_recv`): the number of
/// dimensions, a has-nulls flag, the element type's OID, the dimension's length and lower
/// bound, then the elements, each as a 4-byte length (-1 for NULL) and its bytes. Every integer
/// big-endian; an empty array has no dimensions at all.
enum PostgresBinaryArray {
    static let int8: UInt32 = 20
    static let bytea: UInt32 = 17

    static func header(elementType: UInt32, count: Int, hasNulls: Bool, reserving: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + reserving)
        append(Int32(count == 0 ? 0 : 1), to: &bytes)
        append(Int32(hasNulls ? 1 : 0), to: &bytes)
        append(elementType, to: &bytes)
        if count > 0 {
            append(Int32(count), to: &bytes)
            append(Int32(1), to: &bytes)
        }
        return bytes
    }

    @inline(__always)
    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }
}

/// A one-dimensional `bytea[]` for `unnest(…, $n::bytea[])`, built element by element into
/// one buffer (large arrays of blobs cost one buffer, not one array per element) and sent in
/// binary: the blobs travel as they are, not as hex text twice their size. `postgresText` is
/// the equivalent literal, `{"\\x0a1b",NULL}`.
public struct PostgresByteaArray: PostgresParameter {
    /// The elements in `PostgresBinaryArray`'s form, without the header.
    private var elements: [UInt8] = []
    private var hasNulls = false
    public private(set) var count = 0

    public init() {}

    /// An array of `values`, each one element (an empty one is an empty bytea, not NULL).
    public init(_ values: [[UInt8]]) {
        for value in values { value.withUnsafeBytes { append($0) } }
    }

    /// Appends one element holding `bytes`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        count += 1
        PostgresBinaryArray.append(Int32(bytes.count), to: &elements)
        elements.append(contentsOf: bytes)
    }

    /// Appends a NULL element.
    public mutating func appendNull() {
        count += 1
        hasNulls = true
        PostgresBinaryArray.append(Int32(-1), to: &elements)
    }

    public var postgresBinary: [UInt8]? {
        var bytes = PostgresBinaryArray.header(elementType: PostgresBinaryArray.bytea, count: count, hasNulls: hasNulls,
                                               reserving: elements.count)
        bytes.append(contentsOf: elements)
        return bytes
    }

    public var postgresText: String? {
        var text: [UInt8] = [UInt8(ascii: "{")]
        var offset = 0
        while offset < elements.count {
            if offset > 0 { text.append(UInt8(ascii: ",")) }
            let length = elements[offset..<offset + 4].reduce(Int32(0)) { $0 << 8 | Int32($1) }
            offset += 4
            guard length >= 0 else {
                text.append(contentsOf: "NULL".utf8)
                continue
            }
            text.append(contentsOf: #""\\x"#.utf8)
            for byte in elements[offset..<offset + Int(length)] {
                text.append(PostgresHex.digit(byte >> 4))
                text.append(PostgresHex.digit(byte & 0x0F))
            }
            text.append(UInt8(ascii: "\""))
            offset += Int(length)
        }
        text.append(UInt8(ascii: "}"))
        return String(decoding: text, as: UTF8.self)
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
