import Patience
import Testing
@testable import CounterpointCore

/// docs/event-format.md's table of fields, rule by rule, with every boundary.
@Suite("Event field rules", .onTestThreads)
struct EventFieldRuleTests {
    static let maxTrackID = "9007199254740991"

    @Test("event_id is 1 to 64 characters of [A-Za-z0-9_-]", arguments: [
        (#""A""#, nil), (#""\#(String(repeating: "a", count: 64))""#, nil), (#""az_AZ-09""#, nil),
        (#""\u0041BC""#, nil), (#""\u002d_""#, nil),
        (#""""#, .invalidField), (#""\#(String(repeating: "a", count: 65))""#, .invalidField),
        (#""abc def""#, .invalidField), (#""abc.def""#, .invalidField), (#""abc/def""#, .invalidField),
        (#""é""#, .invalidField), (#""a\nb""#, .invalidField), (#""\u0000""#, .invalidField),
        ("123", .invalidField), ("[\"A\"]", .invalidField), ("true", .invalidField),
        ("null", .missingField), (nil, .missingField),
    ] as [(String?, RejectReason?)])
    func eventIDRule(value: String?, expected: RejectReason?) {
        #expect(rejectReason(eventJSON("event_id", value)) == expected)
    }

    @Test("an escaped event_id is stored unescaped")
    func escapedEventIDIsDecoded() {
        #expect(parsedEvent(eventJSON("event_id", #""\u0041B\u0043-1""#))?.eventID.text == "ABC-1")
        #expect(parsedEvent(eventJSON("event_id", #""\u0041B\u0043-1""#))?.eventID == EventID("ABC-1"))
    }

    @Test("type is one of the eight type strings of SPEC §11, exactly as written", arguments: [
        (#""play""#, nil), (#""\u0070lay""#, nil), (#""download""#, nil), (#""like""#, nil), (#""unlike""#, nil),
        (#""repost""#, nil), (#""unrepost""#, nil), (#""comment""#, nil), (#""comment_deleted""#, nil),
        (#""comment\u005fdeleted""#, nil),
        (#""click""#, .unsupportedType), (#""Play""#, .unsupportedType), (#""""#, .unsupportedType),
        (#""play ""#, .unsupportedType), (#""Like""#, .unsupportedType), (#""comment-deleted""#, .unsupportedType),
        (#""likes""#, .unsupportedType), (#""comment_deleted\u0000""#, .unsupportedType),
        ("5", .invalidField), ("[\"play\"]", .invalidField), ("{}", .invalidField), ("false", .invalidField),
        ("null", .missingField), (nil, .missingField),
    ] as [(String?, RejectReason?)])
    func typeRule(value: String?, expected: RejectReason?) {
        #expect(rejectReason(eventJSON("type", value)) == expected)
    }

    @Test("each type counts for its signal, a retraction with weight -1, and the event keeps its type")
    func typesWeighTheirSignals() {
        let expected: [String: (Signal, Int64)] = [
            "play": (.plays, 1), "download": (.downloads, 1), "like": (.likes, 1), "unlike": (.likes, -1),
            "repost": (.reposts, 1), "unrepost": (.reposts, -1), "comment": (.comments, 1), "comment_deleted": (.comments, -1),
        ]
        #expect(Set(EventType.allCases.map(\.name)) == Set(expected.keys))
        for (name, (signal, weight)) in expected {
            let event = parsedEvent(eventJSON("type", "\"\(name)\""))
            #expect(event?.type.name == name)
            #expect(event?.type.signal == signal && event?.type.weight == weight, "\(name)")
        }
        // Every signal is counted from at least one type.
        #expect(Set(EventType.allCases.map(\.signal)) == Set(Signal.allCases))
    }

    @Test("creator_id, when present, is an integer from 1 to 2^53 - 1; absent or null, the event names no creator", arguments: [
        ("1", 1), (maxTrackID, 9_007_199_254_740_991), ("42", 42),
        ("null", 0), (nil, 0),
    ] as [(String?, Int64)])
    func creatorIDAccepted(value: String?, expected: Int64) {
        #expect(parsedEvent(eventJSON("creator_id", value))?.creatorID == expected)
    }

    @Test("a creator_id of the wrong type or out of range rejects the event as invalid_field", arguments: [
        "0", "-0", "-1", "9007199254740992", "1.0", "1.5", "1e3", "\"7\"", "[7]", "{}", "true", "1e300",
    ])
    func creatorIDRejected(value: String) {
        let rejected = rejection(eventJSON("creator_id", value))
        #expect(rejected?.reason == .invalidField && rejected?.field == "creator_id", "\(value)")
        #expect(rejected?.message == "creator_id must be an integer between 1 and 9007199254740991")
    }

    @Test("creator_id is found wherever it sits and however its key is written")
    func creatorIDAnywhere() {
        let first = "{\"creator_id\":9," + exampleEvent.dropFirst()
        #expect(parsedEvent(first)?.creatorID == 9)
        #expect(parsedEvent(eventJSON("creator_id", "9"))?.creatorID == 9)
        #expect(parsedEvent(exampleEvent.dropLast() + #","cre\u0061tor_id":9}"#)?.creatorID == 9)
        // The last occurrence wins, as for every field.
        #expect(parsedEvent(exampleEvent.dropLast() + #","creator_id":9,"creator_id":null}"#)?.creatorID == 0)
        #expect(rejectReason(exampleEvent.dropLast() + #","creator_id":"x","creator_id":3}"#) == nil)
    }

    @Test("track_id is an integer from 1 to 2^53 - 1", arguments: [
        ("1", nil), (maxTrackID, nil), ("123456", nil),
        ("0", .invalidField), ("-0", .invalidField), ("9007199254740992", .invalidField), ("-1", .invalidField),
        ("1.0", .invalidField), ("1.5", .invalidField), ("1e3", .invalidField), ("1E0", .invalidField),
        (#""123""#, .invalidField), ("true", .invalidField), ("[1]", .invalidField),
        ("9223372036854775807", .invalidField), ("9223372036854775808", .invalidField),
        ("-9223372036854775808", .invalidField), ("-9223372036854775809", .invalidField),
        ("99999999999999999999999999999999", .invalidField), ("18446744073709551616", .invalidField),
        ("null", .missingField), (nil, .missingField),
    ] as [(String?, RejectReason?)])
    func trackIDRule(value: String?, expected: RejectReason?) {
        #expect(rejectReason(eventJSON("track_id", value)) == expected)
    }

    @Test("track_id keeps its exact value up to 2^53 - 1")
    func trackIDValue() {
        #expect(parsedEvent(eventJSON("track_id", Self.maxTrackID))?.trackID == EventLimits.maxTrackID)
        #expect(parsedEvent(eventJSON("track_id", "1"))?.trackID == 1)
    }

    @Test("occurred_at takes RFC 3339 UTC strings", arguments: [
        ("2026-11-20T12:34:56Z", epochMilliseconds(2026, 11, 20, 12, 34, 56)),
        ("2026-11-20T12:34:56+00:00", epochMilliseconds(2026, 11, 20, 12, 34, 56)),
        ("2026-11-20t12:34:56z", epochMilliseconds(2026, 11, 20, 12, 34, 56)),
        ("2026-11-20T12:34:56.7Z", epochMilliseconds(2026, 11, 20, 12, 34, 56, 700)),
        ("2026-11-20T12:34:56.78Z", epochMilliseconds(2026, 11, 20, 12, 34, 56, 780)),
        ("2026-11-20T12:34:56.789Z", epochMilliseconds(2026, 11, 20, 12, 34, 56, 789)),
        ("2026-11-20T12:34:56.7891Z", epochMilliseconds(2026, 11, 20, 12, 34, 56, 789)),
        ("2026-11-20T12:34:56.789999999Z", epochMilliseconds(2026, 11, 20, 12, 34, 56, 789)),
        ("2026-11-20T12:34:56.000000001+00:00", epochMilliseconds(2026, 11, 20, 12, 34, 56)),
        ("2024-02-29T00:00:00Z", epochMilliseconds(2024, 2, 29)),
        ("2000-02-29T00:00:00Z", epochMilliseconds(2000, 2, 29)),
        ("2000-01-01T00:00:00Z", EventLimits.earliestMilliseconds),
        ("2099-12-31T23:59:59.999Z", EventLimits.latestMilliseconds - 1),
    ])
    func occurredAtStrings(text: String, milliseconds: Int64) {
        #expect(parsedEvent(eventJSON("occurred_at", "\"\(text)\""))?.occurredAtMilliseconds == milliseconds)
    }

    @Test("fractions of any length are truncated to milliseconds")
    func fractionsOfEveryLength() {
        for digits in 1...9 {
            let fraction = String("987654321".prefix(digits))
            let expected = Int64(String((fraction + "00").prefix(3)))!
            let event = parsedEvent(eventJSON("occurred_at", "\"2026-11-20T12:34:56.\(fraction)Z\""))
            #expect(event?.occurredAtMilliseconds == epochMilliseconds(2026, 11, 20, 12, 34, 56, expected), "\(digits) digits")
        }
    }

    @Test("occurred_at rejects other offsets, impossible dates and dates out of range", arguments: [
        "2026-11-20T12:34:56+01:00", "2026-11-20T12:34:56-00:00", "2026-11-20T12:34:56-05:00", "2026-11-20T12:34:56",
        "2026-11-20T12:34:56.Z", "2026-11-20 12:34:56Z", "2026-11-20T12:34Z", "2026-11-20", "26-11-20T12:34:56Z",
        "2026-02-29T00:00:00Z", "2026-02-30T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "2026-11-20T24:00:00Z", "2026-11-20T12:60:00Z",
        "2026-12-31T23:59:60Z", "1999-12-31T23:59:59.999Z", "2100-01-01T00:00:00Z", "2100-02-29T00:00:00Z",
        " 2026-11-20T12:34:56Z", "2026-11-20T12:34:56Z ", "2026-11-20T12:34:56+00:00Z", "2026-11-20T12:34:56ZZ",
        "2026-11-20T12:34:56+0000", "2026-11-20T1a:34:56Z", "", "yesterday",
    ])
    func occurredAtRejects(text: String) {
        #expect(rejectReason(eventJSON("occurred_at", "\"\(text)\"")) == .invalidField)
    }

    @Test("occurred_at takes integer epoch milliseconds in [2000-01-01, 2100-01-01)", arguments: [
        ("946684800000", nil), ("4102444799999", nil), ("1795000000000", nil),
        ("946684799999", .invalidField), ("4102444800000", .invalidField), ("0", .invalidField),
        ("-1", .invalidField), ("1795000000000.0", .invalidField), ("1.795e12", .invalidField),
        ("99999999999999999999", .invalidField), ("{}", .invalidField), ("true", .invalidField),
        ("null", .missingField), (nil, .missingField),
    ] as [(String?, RejectReason?)])
    func occurredAtIntegers(value: String?, expected: RejectReason?) {
        #expect(rejectReason(eventJSON("occurred_at", value)) == expected)
        if expected == nil, let value {
            #expect(parsedEvent(eventJSON("occurred_at", value))?.occurredAtMilliseconds == Int64(value))
        }
    }

    @Test("an escaped timestamp is parsed after unescaping")
    func escapedTimestamp() {
        let event = parsedEvent(eventJSON("occurred_at", #""2026-11-20T12:34:56\u002E5\u005A""#))
        #expect(event?.occurredAtMilliseconds == epochMilliseconds(2026, 11, 20, 12, 34, 56, 500))
    }

    @Test("listener_id and position_ms are optional integers >= 0", arguments: ["listener_id", "position_ms"])
    func nonNegativeIntegers(field: String) {
        for value in ["0", "1", "9223372036854775807", "null"] {
            #expect(rejectReason(eventJSON(field, value)) == nil, "\(field): \(value)")
        }
        #expect(rejectReason(eventJSON(field, nil)) == nil)
        for value in ["-1", "1.5", "1e2", "\"1\"", "9223372036854775808", "[]", "false"] {
            #expect(rejectReason(eventJSON(field, value)) == .invalidField, "\(field): \(value)")
        }
    }

    @Test("duration_ms is an optional integer > 0", arguments: [
        ("1", nil), ("215000", nil), ("null", nil), (nil, nil),
        ("0", .invalidField), ("-0", .invalidField), ("-5", .invalidField), ("1.0", .invalidField),
        (#""215000""#, .invalidField),
    ] as [(String?, RejectReason?)])
    func durationRule(value: String?, expected: RejectReason?) {
        #expect(rejectReason(eventJSON("duration_ms", value)) == expected)
    }

    @Test("client and country are optional strings of at most 32 bytes", arguments: ["client", "country"])
    func shortStrings(field: String) {
        let accepted = [
            #""""#, "\"\(String(repeating: "x", count: 32))\"", "\"\(String(repeating: "é", count: 16))\"",
            "\"\(String(repeating: #"\u00e9"#, count: 16))\"", "\"\(String(repeating: #"\n"#, count: 32))\"", "null",
        ]
        for value in accepted {
            #expect(rejectReason(eventJSON(field, value)) == nil, "\(field): \(value)")
        }
        #expect(rejectReason(eventJSON(field, nil)) == nil)
        let rejected = [
            "\"\(String(repeating: "x", count: 33))\"", "\"\(String(repeating: "é", count: 17))\"",
            "\"\(String(repeating: #"\u00e9"#, count: 17))\"", "5", "[\"ios\"]", "{}", "true",
        ]
        for value in rejected {
            #expect(rejectReason(eventJSON(field, value)) == .invalidField, "\(field): \(value)")
        }
    }

    @Test("unknown fields are ignored whatever their value")
    func unknownFieldsAreIgnored() {
        #expect(parsedEvent(eventJSON("session", #"{"id":[1,2,{"x":null}],"ok":true}"#)) == parsedEvent(exampleEvent))
        #expect(rejectReason(eventJSON("Track_ID", "\"not a number\"")) == nil)
        #expect(rejectReason(eventJSON("track_id ", "-1")) == nil)
    }

    @Test("each field's key pattern is its \"name\": read as little-endian words at the start and at the end")
    func keyPatternsSpellTheNames() {
        for field in EventField.allCases {
            let bytes = Array("\"\(field.name)\":".utf8)
            let width = bytes.count >= 8 ? 8 : 4
            func word(at offset: Int) -> UInt64 {
                bytes[offset..<offset + width].reversed().reduce(0) { $0 << 8 | UInt64($1) }
            }
            let derived = EventField.KeyPattern(length: bytes.count, head: word(at: 0), tail: word(at: bytes.count - width))
            #expect(field.keyPattern == derived, "\(field.name)")
        }
    }
}

/// Which reason wins when an event breaks several rules, and what the messages say.
@Suite("Event rejection precedence", .onTestThreads)
struct EventRejectionPrecedenceTests {
    @Test("a syntax fault anywhere outranks every field fault")
    func syntaxFirst() {
        #expect(rejectReason(#"{"track_id":0,"type":"click","x":[1,]}"#) == .malformedJSON)
        #expect(rejectReason(#"{"track_id":0,"x":"\#u{1}"}"#) == .malformedJSON)
    }

    @Test("unsupported_type outranks invalid and missing fields")
    func unsupportedTypeSecond() {
        #expect(rejectReason(#"{"type":"click","track_id":0}"#) == .unsupportedType)
        #expect(rejection(#"{"type":"pause"}"#)?.message ==
            #"event type "pause" is not supported (the types are play, download, like, unlike, repost, unrepost, comment, comment_deleted)"#)
    }

    @Test("invalid fields are reported before missing ones, in field order")
    func invalidBeforeMissing() {
        #expect(rejectReason(#"{"event_id":"A","type":"play","duration_ms":0}"#) == .invalidField)
        let both = rejection(#"{"track_id":0,"event_id":"","type":"play","occurred_at":946684800000}"#)
        #expect(both?.field == "event_id")
        #expect(rejection(eventJSON("country", "1").dropLast() + #","track_id":0}"#)?.field == "track_id")
    }

    @Test("the first missing field is reported in the order event_id, type, track_id, occurred_at")
    func missingOrder() {
        #expect(rejection("{}")?.field == "event_id")
        #expect(rejection(#"{"event_id":"A"}"#)?.field == "type")
        #expect(rejection(#"{"event_id":"A","type":"play","occurred_at":946684800000}"#)?.field == "track_id")
        #expect(rejection(#"{"event_id":"A","type":"play","track_id":1}"#)?.field == "occurred_at")
        #expect(rejection(#"{"event_id":"A","type":"play","track_id":null,"occurred_at":946684800000}"#)?.message
            == "required field track_id is null")
        #expect(rejection(#"{"event_id":"A","type":"play","occurred_at":946684800000}"#)?.message
            == "required field track_id is missing")
    }

    @Test("invalid_field messages state the rule")
    func fieldMessages() {
        let trackRejection = rejection(eventJSON("track_id", "0"))
        #expect(trackRejection == EventRejection(reason: .invalidField, field: "track_id",
                                                  message: "track_id must be an integer between 1 and 9007199254740991"))
        #expect(rejection(eventJSON("occurred_at", "1"))?.message.hasPrefix("occurred_at must be an RFC 3339 UTC timestamp") == true)
        for field in EventField.allCases {
            #expect(field.rule.hasPrefix(field.name))
        }
    }
}
