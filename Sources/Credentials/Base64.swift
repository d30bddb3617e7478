/// Standard base64 (RFC 4648 §4, with padding): what HTTP Basic credentials and CSP hash
/// sources are written in.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let chunk = bytes[start..<min(start + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << UInt32(16 - 8 * $1.offset) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[Int(value >> UInt32(18 - 6 * position) & 63)] : UInt8(ascii: "="))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil unless it is canonical padded base64: a multiple of four
    /// characters of the alphabet, `=` only as the last one or two, no unused bits set.
    public static func decode(_ text: Substring.UTF8View) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var value: UInt32 = 0
        var sextets = 0
        var padding = 0
        for character in text {
            if character == UInt8(ascii: "=") {
                padding += 1
                guard padding <= 2 else { return nil }
                value <<= 6
            } else {
                guard padding == 0, let sextet = sextetValue(character) else { return nil }
                value = value << 6 | UInt32(sextet)
            }
            sextets += 1
            if sextets == 4 {
                out += [UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
                value = 0
                sextets = 0
            }
        }
        guard sextets == 0 else { return nil }
        if padding > 0 {
            // The padded positions and the unused bits before them must be zero.
            let last = out.suffix(3)
            let usedBytes = 3 - padding
            guard last.dropFirst(usedBytes).allSatisfy({ $0 == 0 }) else { return nil }
            out.removeLast(padding)
        }
        return out
    }

    private static func sextetValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
