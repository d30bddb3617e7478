/// Splits and decodes a request target exactly as received. Strict on purpose: a target that could be
/// read two ways (a stray `%`, an encoded NUL that C code would truncate at, bytes that are not UTF-8)
/// is refused rather than guessed at.
struct RequestTarget {
    var path: String
    var query: [(name: String, value: String)]
    /// The target as received; shares the path's storage when the two are the same bytes.
    var raw: String

    private static let percent = UInt8(ascii: "%")
    private static let plus = UInt8(ascii: "+")
    private static let slash = UInt8(ascii: "/")
    private static let questionMark = UInt8(ascii: "?")
    private static let ampersand = UInt8(ascii: "&")
    private static let equals = UInt8(ascii: "=")

    static func parse(_ raw: UnsafeBufferPointer<UInt8>) throws(HTTPRejection) -> RequestTarget {
        if raw.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw .badRequestTarget(reason: "the request target contains a space or a control character")
        }
        let originStart = originFormStart(raw)
        guard originStart < raw.count, raw[originStart] == slash else {
            throw .badRequestTarget(reason: "the request target must be a path starting with '/'")
        }
        let target = UnsafeBufferPointer(rebasing: raw[originStart...])
        let queryStart = target.firstIndex(of: questionMark)
        let rawPath = UnsafeBufferPointer(rebasing: target[..<(queryStart ?? target.endIndex)])
        guard let path = decode(rawPath, plusIsSpace: false) else {
            throw .badRequestTarget(reason: "the path has invalid percent-encoding, an encoded NUL or invalid UTF-8")
        }
        var query: [(name: String, value: String)] = []
        if let queryStart {
            let rawQuery = UnsafeBufferPointer(rebasing: target[(queryStart + 1)...])
            for field in rawQuery.split(separator: ampersand, omittingEmptySubsequences: true) {
                let separator = field.firstIndex(of: equals) ?? field.endIndex
                let name = decode(UnsafeBufferPointer(rebasing: field[..<separator]), plusIsSpace: true)
                let value = separator == field.endIndex
                    ? ""
                    : decode(UnsafeBufferPointer(rebasing: field[(separator + 1)...]), plusIsSpace: true)
                guard let name, let value else {
                    throw .badRequestTarget(reason: "the query has invalid percent-encoding, an encoded NUL or invalid UTF-8")
                }
                query.append((name: name, value: value))
            }
        }
        let rawIsPath = originStart == 0 && queryStart == nil && path.utf8.count == raw.count
        return RequestTarget(path: path, query: query, raw: rawIsPath ? path : String(decoding: raw, as: UTF8.self))
    }

    /// Where the path begins: 0 for the usual origin form (`/path`), or just past the authority for the
    /// absolute form (`http://host/path`) that HTTP/1.1 servers must also accept.
    private static func originFormStart(_ raw: UnsafeBufferPointer<UInt8>) -> Int {
        if raw.first == slash { return 0 }
        for scheme in ["http://", "https://"] {
            let prefix = Array(scheme.utf8)
            guard raw.count >= prefix.count,
                  zip(raw, prefix).allSatisfy({ ($0 | 0x20) == $1 || $0 == $1 })
            else { continue }
            let authorityEnd = raw[prefix.count...].firstIndex { $0 == slash || $0 == questionMark }
            return authorityEnd ?? raw.count
        }
        return 0
    }

    /// Percent-decodes once. Returns nil for a `%` not followed by two hex digits, a decoded NUL, or a
    /// result that is not valid UTF-8.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String? {
        let needsDecoding = bytes.contains { $0 == percent || (plusIsSpace && $0 == plus) }
        if !needsDecoding {
            return String(validating: bytes, as: UTF8.self)
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { decoded -> String? in
            var written = 0
            var index = 0
            while index < bytes.count {
                var byte = bytes[index]
                if byte == percent {
                    guard index + 2 < bytes.count,
                          let high = hexValue(bytes[index + 1]),
                          let low = hexValue(bytes[index + 2])
                    else { return nil }
                    byte = high << 4 | low
                    if byte == 0 { return nil }
                    index += 3
                } else {
                    if plusIsSpace && byte == plus { byte = UInt8(ascii: " ") }
                    index += 1
                }
                decoded[written] = byte
                written += 1
            }
            return String(validating: UnsafeBufferPointer(rebasing: decoded[..<written]), as: UTF8.self)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
