import Generator

/// Seeded generators of JSON-ish inputs for the randomized parser tests.
struct RandomInputs {
    var rng: SeededRandom

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }
    mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func pick<T>(_ choices: [T]) -> T { choices[int(0..<choices.count)] }

    /// Arbitrary bytes, any value, any length up to `maxLength`.
    mutating func bytes(maxLength: Int) -> [UInt8] {
        (0..<int(0..<(maxLength + 1))).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
    }

    // MARK: Documents

    static let knownKeys = ["event_id", "type", "track_id", "occurred_at", "listener_id", "position_ms", "duration_ms",
                            "client", "country", "creator_id"]

    /// An event-shaped object: the event fields in random order, some values replaced by random
    /// values, some fields dropped or duplicated, unknown fields added.
    /// `shuffled: false` keeps the example's order, the one producers write, and adds the unknown
    /// fields in random places.
    mutating func eventDocument(shuffled: Bool = true) -> [UInt8] {
        var members: [(String, String)] = exampleFields.map { ($0.key, $0.value) }
        if chance(50) { members.append(("creator_id", pick(["7", "9007199254740991", "0", "null"]))) }
        for index in members.indices where chance(15) { members[index].1 = value(depth: 1) }
        members.removeAll { _ in chance(5) }
        for _ in 0..<int(0..<3) {
            let member = (chance(70) ? "x\(int(0..<100))" : pick(Self.knownKeys), value(depth: 1))
            if shuffled { members.append(member) } else { members.insert(member, at: int(0..<(members.count + 1))) }
        }
        if shuffled { members.shuffle(using: &rng) }
        return Array(object(members).utf8)
    }

    /// A random object at the top level.
    mutating func randomDocument() -> [UInt8] {
        let members = (0..<int(0..<6)).map { _ in (chance(40) ? pick(Self.knownKeys) : key(), value(depth: 1)) }
        return Array(object(members).utf8)
    }

    mutating func object(_ members: [(String, String)]) -> String {
        "{" + members.map { "\(whitespace())\"\($0.0)\"\(whitespace()):\(whitespace())\($0.1)\(whitespace())" }
            .joined(separator: ",") + "}"
    }

    mutating func whitespace() -> String {
        chance(85) ? "" : pick([" ", "\n", "\t", "\r\n", "  "])
    }

    mutating func key() -> String { chance(50) ? "k\(int(0..<20))" : stringBody() }

    mutating func value(depth: Int) -> String {
        switch int(0..<(depth < 5 ? 9 : 7)) {
        case 0, 1: return "\"" + stringBody() + "\""
        case 2: return integer()
        case 3: return decimal()
        case 4: return pick(["true", "false", "null"])
        case 5: return "\"" + pick(["play", "click", "like", "comment_deleted", "2026-11-20T12:34:56Z", "2026-11-20T12:34:56.123456+00:00",
                                    "01JD3Q6Z8W4N5V7K2M9P0R1S3T", ""]) + "\""
        case 6: return pick(["0", "1", "9007199254740991", "9007199254740992", "-1", "1795000000000"])
        case 7:
            return "[" + (0..<int(0..<4)).map { _ in whitespace() + value(depth: depth + 1) }.joined(separator: ",") + "]"
        default:
            let members = (0..<int(0..<4)).map { _ in (key(), value(depth: depth + 1)) }
            return object(members)
        }
    }

    mutating func integer() -> String {
        let digits = int(1..<(chance(10) ? 25 : 12))
        let body = String(int(1..<10)) + String((1..<digits).map { _ in Character(String(int(0..<10))) })
        return (chance(20) ? "-" : "") + (chance(10) ? "0" : body)
    }

    mutating func decimal() -> String {
        var text = integer()
        if chance(60) { text += "." + String(int(0..<1000)) }
        if chance(40) { text += pick(["e", "E"]) + pick(["", "+", "-"]) + String(int(0..<40)) }
        return text
    }

    /// A string body (without quotes) mixing plain text, escapes and non-ASCII characters.
    mutating func stringBody() -> String {
        var text = ""
        for _ in 0..<int(0..<6) {
            switch int(0..<8) {
            case 0, 1: text += pick(["abc", "play", "Z", "01JD", "a_b-c", " ", "x y"])
            case 2: text += pick([#"\n"#, #"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\r"#, #"\t"#])
            case 3: text += escape(UInt32(pick([0x41, 0xE9, 0x6771, 0xFFFF, 0x0, 0x1F, 0x7F])))
            case 4: text += escape(0xD83D) + escape(0xDE00)
            case 5: text += pick(["é", "東京", "🎵", "\u{7F}", "ü"])
            case 6: text += escape(UInt32(int(0..<0xD800)))
            default: text += String(repeating: "q", count: int(0..<40))
            }
        }
        return text
    }

    // MARK: Mutations

    /// Bytes a mutation inserts: mostly JSON punctuation and pieces of tokens, sometimes
    /// anything (including bytes that are not UTF-8).
    mutating func mutationPiece(anyByte: Bool) -> [UInt8] {
        if anyByte && chance(30) { return [UInt8.random(in: .min ... .max, using: &rng)] }
        let pieces = ["{", "}", "[", "]", ":", ",", "\"", "\\", " ", "\n", "\t", "0", "1", "9", "-", "+", ".", "e", "E",
                      "t", "n", "u", "\\u", "\\uD83D", "\\uDE00", "é", "null", "true", "x", "/", "'"]
        if chance(5) { return pick([[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x00], [0x1F], [0x7F]]) }
        return Array(pick(pieces).utf8)
    }

    /// `document` with a few random edits: deletions, insertions, replacements, duplicated
    /// or swapped slices, truncation.
    mutating func mutate(_ document: [UInt8], anyByte: Bool) -> [UInt8] {
        var bytes = document
        for _ in 0..<int(1..<4) {
            let position = int(0..<(bytes.count + 1))
            switch int(0..<6) {
            case 0 where !bytes.isEmpty:
                bytes.remove(at: min(position, bytes.count - 1))
            case 1:
                bytes.insert(contentsOf: mutationPiece(anyByte: anyByte), at: position)
            case 2 where position < bytes.count:
                bytes.replaceSubrange(position...position, with: mutationPiece(anyByte: anyByte))
            case 3 where position < bytes.count:
                let end = min(bytes.count, position + int(1..<12))
                bytes.insert(contentsOf: bytes[position..<end], at: int(0..<(bytes.count + 1)))
            case 4 where chance(30):
                bytes.removeSubrange(position...)
            default:
                if position < bytes.count { bytes.swapAt(position, int(0..<bytes.count)) }
            }
        }
        return bytes
    }

    /// A `\uXXXX` escape, in either case.
    mutating func escape(_ unit: UInt32) -> String {
        let hex = String(unit, radix: 16, uppercase: chance(50))
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
