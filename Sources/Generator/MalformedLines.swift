import CounterpointCore

/// The ways a generated line is made to be rejected. Every variant breaks a docs/event-format.md rule that
/// any conforming validator must enforce, and each carries an `event_id` of its own (or none),
/// so a malformed line can never be mistaken for a duplicate of a valid event.
public enum MalformedKind: String, CaseIterable, Sendable {
    /// The line stops before the closing `}` (expected reason: `malformed_json`).
    case truncatedJSON
    /// `event_id`, `type`, `track_id` or `occurred_at` is absent (`missing_field`).
    case missingField
    /// `track_id` is 0, negative, a string, 2^53, a fraction or null (`invalid_field`).
    case invalidTrackID
    /// `occurred_at` is not a time, outside 2000…2100, hour 25, or not UTC (`invalid_field`).
    case invalidTimestamp
    /// `type` is none of the eight types of docs/event-format.md (`unsupported_type`).
    case unsupportedType
    /// A valid event padded past 64 KiB with an unknown field (`too_large`).
    case oversized
    /// `event_id` holds bytes that are not UTF-8 (`invalid_field` or `malformed_json`).
    case invalidUTF8

    /// Relative frequencies; oversized lines are rare because each is ~70 KB.
    var weight: Int {
        switch self {
        case .truncatedJSON, .invalidTrackID: 20
        case .missingField, .invalidTimestamp, .unsupportedType: 15
        case .invalidUTF8: 13
        case .oversized: 2
        }
    }
}

/// Makes malformed lines from valid events of their own synthesizer stream.
struct MalformedLineMaker {
    private var events: EventSynthesizer
    private var random: SeededRandom
    private let kindTable: [MalformedKind]

    init(configuration: GeneratorConfiguration, popularity: ZipfSampler) {
        events = EventSynthesizer(configuration: configuration, stream: 1, popularity: popularity)
        random = SeededRandom(seed: SeededRandom.mix(configuration.seed ^ 0x6D61_6C66_6F72_6D65))
        kindTable = MalformedKind.allCases.flatMap { Array(repeating: $0, count: $0.weight) }
    }

    /// A line to be rejected, for an event in `hour`.
    mutating func makeLine(in hour: Hour) -> (line: [UInt8], kind: MalformedKind) {
        let time = hour.epochSeconds * 1000 + Int64(random.next(below: 3_600_000))
        var line: [UInt8] = []
        _ = events.appendEvent(occurredAtMilliseconds: time, to: &line)
        let kind = kindTable[random.next(below: kindTable.count)]
        let variant = random.next(below: 6)
        switch kind {
        case .truncatedJSON:
            line.removeLast(line.count - (10 + random.next(below: line.count - 11)))
        case .missingField:
            let field = ["event_id", "type", "track_id", "occurred_at"][variant % 4]
            Self.replaceValue(of: field, in: &line, with: nil)
        case .invalidTrackID:
            let value = ["0", "-5", #""42""#, "9007199254740992", "1.5", "null"][variant]
            Self.replaceValue(of: "track_id", in: &line, with: Array(value.utf8))
        case .invalidTimestamp:
            let value: String
            switch variant % 4 {
            case 0: value = #""yesterday""#
            case 1: value = #""1999-12-31T23:59:59.999Z""#
            case 2: value = #""2026-11-20T25:00:00Z""#
            default: value = #""\#(UTCTime.format(epochMilliseconds: time).dropLast())+02:00""#
            }
            Self.replaceValue(of: "occurred_at", in: &line, with: Array(value.utf8))
        case .unsupportedType:
            let value = [#""skip""#, #""share""#, #""pause""#][variant % 3]
            Self.replaceValue(of: "type", in: &line, with: Array(value.utf8))
        case .oversized:
            let padding = EventLimits.maxEventBytes + 1 + random.next(below: 8_192)
            line.removeLast()   // the closing brace
            line += Array(#","padding":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: padding)
                + Array(#""}"#.utf8)
        case .invalidUTF8:
            // `"event_id":"` is the first 13 bytes; spoil a few of the id's characters.
            let position = 13 + random.next(below: 20)
            line.replaceSubrange(position..<position + 2, with: variant % 2 == 0 ? [0xFF, 0xFE] : [0xC3, 0x28])
        }
        return (line, kind)
    }

    /// Replaces the value of `"key":` in a flat JSON object (or removes the member when `value`
    /// is nil). Our own lines have no nesting and no commas inside values, so a scan suffices.
    static func replaceValue(of key: String, in line: inout [UInt8], with value: [UInt8]?) {
        let pattern = Array("\"\(key)\":".utf8)
        guard let keyStart = line.indices.first(where: { line[$0...].starts(with: pattern) }) else { return }
        let valueStart = keyStart + pattern.count
        let valueEnd = line[valueStart...].firstIndex(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") })!
        if let value {
            line.replaceSubrange(valueStart..<valueEnd, with: value)
        } else if line[valueEnd] == UInt8(ascii: ",") {
            line.removeSubrange(keyStart...valueEnd)
        } else {
            line.removeSubrange((keyStart - 1)..<valueEnd)   // last member: drop the comma before it
        }
    }
}
