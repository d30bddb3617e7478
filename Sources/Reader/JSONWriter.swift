import CounterpointCore

/// A minimal JSON text builder over a byte buffer.
///
/// The reader answers tens of thousands of requests per second; building answers with
/// `JSONEncoder` would allocate per field. Callers write keys and values in order; the
/// writer only takes care of separators and string escaping.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// One flag per open container: whether it already holds a member (so a comma is due).
    private var needsComma: [Bool] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma.removeLast() }
    mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma.removeLast() }

    /// Writes `"name":`; the value written next belongs to it.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        // The value that follows belongs to this key and takes no separator of its own.
        pendingValueAfterKey = true
    }

    private var pendingValueAfterKey = false

    /// Writes `"name":` for a name of plain identifier bytes (a `Column`'s), which need no escaping.
    mutating func key(identifier name: [UInt8]) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        pendingValueAfterKey = true
    }

    /// A key that is not a literal (a reason code, say); escaped like any string.
    mutating func key(dynamic name: String) {
        value(name)
        bytes.append(UInt8(ascii: ":"))
        pendingValueAfterKey = true
    }

    mutating func value(_ number: Int64) {
        separate()
        if number == 0 { bytes.append(UInt8(ascii: "0")); return }
        var magnitude = number.magnitude
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    mutating func value(_ number: Int) { value(Int64(number)) }

    mutating func value(_ number: Double) {
        separate()
        if number.isFinite {
            bytes.append(contentsOf: "\(number)".utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
    }

    mutating func value(_ flag: Bool) {
        separate()
        bytes.append(contentsOf: (flag ? "true" : "false").utf8)
    }

    mutating func null() { separate(); bytes.append(contentsOf: "null".utf8) }

    mutating func value(_ text: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// An RFC 3339 UTC timestamp string for the start of `hour`.
    mutating func value(_ hour: Hour) { time(epochSeconds: hour.epochSeconds) }

    mutating func time(epochSeconds: Int64) {
        quoted { UTCTime.append(epochSeconds: epochSeconds, to: &$0) }
    }

    /// Every answer's freshness has one: written in place, not through a string.
    mutating func time(epochMilliseconds: Int64) {
        quoted { UTCTime.append(epochMilliseconds: epochMilliseconds, to: &$0) }
    }

    /// A string value whose bytes `write` appends, none of them needing an escape.
    private mutating func quoted(_ write: (inout [UInt8]) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        write(&bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func optional<T>(_ value: T?, _ write: (inout JSONWriter, T) -> Void) {
        if let value { write(&self, value) } else { null() }
    }

    private mutating func separate() {
        if pendingValueAfterKey { pendingValueAfterKey = false; return }
        guard !needsComma.isEmpty else { return }
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }
}

extension JSONWriter {
    /// A subject's id member: `"track_id":42` or `"creator_id":7` (`SubjectKind.idField`).
    mutating func id(_ subject: Subject) {
        key(identifier: subject.kind.idFieldBytes)
        value(subject.id)
    }
}

extension SubjectKind {
    /// `idField` and `plural` as bytes, made once: JSON keys written on every answer.
    private static let idFields = allCases.map { Array($0.idField.utf8) }
    private static let plurals = allCases.map { Array($0.plural.utf8) }

    var idFieldBytes: [UInt8] { Self.idFields[rawValue] }
    var pluralBytes: [UInt8] { Self.plurals[rawValue] }
}
