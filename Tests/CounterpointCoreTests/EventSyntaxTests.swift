import Patience
import Testing
@testable import CounterpointCore

/// docs/event-format.md: one event is exactly one JSON object; anything else is rejected with a reason.
@Suite("Event JSON syntax", .onTestThreads)
struct EventSyntaxTests {
    @Test("the example event of docs/event-format.md is valid and decodes to its values")
    func exampleEventDecodes() throws {
        let event = try #require(parsedEvent(exampleEvent))
        #expect(event.eventID.text == "01JD3Q6Z8W4N5V7K2M9P0R1S3T")
        #expect(event.trackID == 123_456)
        #expect(event.occurredAtMilliseconds == epochMilliseconds(2026, 11, 20, 12, 34, 56, 789))
        #expect(event.hour == Hour(epochMilliseconds: epochMilliseconds(2026, 11, 20, 12)))
    }

    @Test("blank input is empty, not malformed", arguments: ["", " ", "\n", "\r\n", " \t \r\n "])
    func blankInputIsEmpty(text: String) {
        #expect(rejectReason(text) == .empty)
    }

    @Test("JSON whitespace around and inside the object is allowed", arguments: [
        " \(exampleEvent) ",
        "\n\t\(exampleEvent)\r\n",
        "{ \"event_id\" : \"A\" ,\n\t\"type\":\"play\" , \"track_id\" :1, \"occurred_at\": 946684800000 }",
    ])
    func whitespaceIsAllowed(text: String) {
        #expect(rejectReason(text) == nil)
    }

    @Test("anything but exactly one JSON object is malformed_json", arguments: [
        "\(exampleEvent)x", "\(exampleEvent){}", "\(exampleEvent),", "\(exampleEvent) \(exampleEvent)",
        "[\(exampleEvent)]", "\"play\"", "5", "null", "true", "not json", "{", "}", "{\"event_id\"",
        "{\"event_id\":}", "{\"event_id\" \"A\"}", "{event_id:\"A\"}", "{'event_id':'A'}", "{\"a\":1,}",
        "{,}", "{\"a\":1 \"b\":2}", "{\"a\":1;\"b\":2}", "\u{FEFF}\(exampleEvent)", "{\"a\":\"unterminated}",
        "{\"a\":1}\u{0}", "\u{0}", "{\"a\":1}\u{0B}", "\u{0C}{\"a\":1}",
    ])
    func notOneObjectIsMalformed(text: String) {
        #expect(rejectReason(text) == .malformedJSON)
    }

    @Test("numbers follow the JSON grammar exactly", arguments: [
        ("0", true), ("-0", true), ("12", true), ("1.5", true), ("-1.5e-3", true), ("1E5", true), ("1e+5", true),
        ("0.0", true), ("1e400", true), (String(repeating: "9", count: 400), true), ("-0.0e-0", true),
        ("01", false), ("-", false), ("1.", false), (".5", false), ("1e", false), ("1e+", false), ("+1", false),
        ("--1", false), ("1.e3", false), ("0x10", false), ("1_000", false), ("NaN", false), ("Infinity", false),
        ("-Infinity", false), ("1.5.5", false), ("00", false), ("-01", false), ("1ee5", false),
    ])
    func numbersFollowTheGrammar(number: String, valid: Bool) {
        #expect(rejectReason(eventJSON("extra", number)) == (valid ? nil : .malformedJSON))
    }

    @Test("literals must be exactly true, false or null", arguments: [
        ("true", true), ("false", true), ("null", true),
        ("tru", false), ("True", false), ("nul", false), ("nulll", false), ("fals", false), ("undefined", false),
    ])
    func literalsAreExact(literal: String, valid: Bool) {
        #expect(rejectReason(eventJSON("extra", literal)) == (valid ? nil : .malformedJSON))
    }

    @Test("unknown fields of any shape are skipped but still validated", arguments: [
        (#"{"a":{"b":[1,{"c":null}],"d":[]},"e":{},"f":[[[]]]}"#, true),
        (#"[1, "two", 3.0, true, false, null, {"k": [ ]}]"#, true),
        (#"{ }"#, true), (#"[ ]"#, true), (#""""#, true),
        (#"[1,]"#, false), (#"[,1]"#, false), (#"{"b"}"#, false), (#"{"b":}"#, false), (#"[1 2]"#, false),
        (#"{"b":1,}"#, false), (#"{1:2}"#, false), (#"[}"#, false), (#"{]"#, false), (#"["#, false),
    ])
    func unknownFieldsAreValidated(value: String, valid: Bool) {
        #expect(rejectReason(eventJSON("extra", value)) == (valid ? nil : .malformedJSON))
        #expect(rejectReason(eventJSON("extra", "[\(value)]")) == (valid ? nil : .malformedJSON))
    }

    @Test("nesting up to the depth limit is accepted and deeper nesting is malformed_json")
    func nestingDepthIsLimited() {
        // The event object is level 1, so an unknown value may nest 63 more levels.
        let deepest = EventParser.maxNestingDepth - 1
        #expect(rejectReason(eventJSON("extra", String(repeating: "[", count: deepest) + String(repeating: "]", count: deepest))) == nil)
        #expect(rejectReason(eventJSON("extra", String(repeating: "[", count: deepest + 1) + String(repeating: "]", count: deepest + 1))) == .malformedJSON)
        let objects = String(repeating: #"{"a":"#, count: deepest + 1) + "1" + String(repeating: "}", count: deepest + 1)
        #expect(rejectReason(eventJSON("extra", objects)) == .malformedJSON)
        // Far deeper input is rejected, not a stack overflow.
        #expect(rejectReason("{\"a\":" + String(repeating: "[", count: 60_000)) == .malformedJSON)
    }

    @Test("string escapes are validated, surrogates must pair", arguments: [
        (#""\n\t\"\\\/\b\f\r""#, true), (#""\u00e9\u00E9""#, true), (#""\uD83D\uDE00""#, true), (#""\ud83d\ude00""#, true),
        (#""\u0000""#, true), (#""\uFFFF""#, true),
        (#""\uD83D""#, false), (#""\uDE00""#, false), (#""\uD83Dx""#, false), (#""\uD83D\u0041""#, false),
        (#""\uD83D\uD83D""#, false), (#""\x""#, false), (#""\u12""#, false), (#""\u12G4""#, false), (#""\U0041""#, false),
        (#""\'""#, false), (#""\""#, false), ("\"\\", false), ("\"a\tb\"", false), ("\"a\nb\"", false),
        ("\"a\u{0}b\"", false), ("\"a\u{1F}b\"", false),
    ])
    func escapesAreValidated(value: String, valid: Bool) {
        #expect(rejectReason(eventJSON("extra", value)) == (valid ? nil : .malformedJSON))
    }

    @Test("DEL and valid non-ASCII UTF-8 are ordinary string content")
    func nonASCIIStringsAreAccepted() {
        #expect(rejectReason(eventJSON("extra", "\"a\u{7F}b\"")) == nil)
        #expect(rejectReason(eventJSON("extra", "\"Grüße, 東京 🎵\"")) == nil)
        #expect(rejectReason(eventJSON("extra", "\"" + String(repeating: "é", count: 300) + "\"")) == nil)
    }

    @Test("bytes that are not UTF-8 are invalid_utf8, in strings and between tokens", arguments: [
        [0xFF], [0xC3], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
        [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xE2, 0x82], [0xF0, 0x9F, 0x8E],
    ] as [[UInt8]])
    func invalidUTF8IsRejected(bytes: [UInt8]) {
        let inString = Array(#"{"client":"a"#.utf8) + bytes + Array(#"b"}"#.utf8)
        #expect(rejectReason(inString) == .invalidUTF8)
        let inUnknownString = Array(eventJSON("extra", "\"x\"").dropLast(2).utf8) + bytes + Array("\"}".utf8)
        #expect(rejectReason(inUnknownString) == .invalidUTF8)
        #expect(rejectReason(Array(exampleEvent.utf8) + bytes) == .invalidUTF8)
        #expect(rejectReason(bytes + Array(exampleEvent.utf8)) == .invalidUTF8)
    }

    @Test("valid UTF-8 where a token belongs is malformed_json, not invalid_utf8")
    func strayNonASCIIIsMalformed() {
        #expect(rejectReason("{\"a\":é}") == .malformedJSON)
        #expect(rejectReason("\(exampleEvent)é") == .malformedJSON)
    }

    @Test("events over 64 KiB are too_large without being parsed; 64 KiB exactly is parsed")
    func sizeLimit() {
        let limit = EventLimits.maxEventBytes
        let padded = exampleEvent + String(repeating: " ", count: limit - exampleEvent.utf8.count)
        #expect(padded.utf8.count == limit)
        #expect(rejectReason(padded) == nil)
        #expect(rejectReason(padded + " ") == .tooLarge)
        #expect(rejectReason(String(repeating: "x", count: limit + 1)) == .tooLarge)
        #expect(rejectReason(String(repeating: " ", count: limit + 1)) == .tooLarge)
    }

    @Test("fields may come in any order")
    func fieldOrderDoesNotMatter() {
        let reversed = "{" + exampleFields.reversed().map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        #expect(parsedEvent(reversed) == parsedEvent(exampleEvent))
        #expect(parsedEvent(reversed) != nil)
    }

    @Test("escaped keys name the same fields")
    func escapedKeysMatch() {
        let event = parsedEvent(#"{"event\u005fid":"A","\u0074ype":"play","track_id":1,"track\u005Fid":7,"occurred_at":946684800000}"#)
        #expect(event?.trackID == 7)
        #expect(event?.eventID.text == "A")
        #expect(rejectReason(#"{"event_id":"A","type":"play","track_id":1,"occurred_at":946684800000,"duration\u005fms":0}"#) == .invalidField)
    }

    @Test("a duplicate key's last occurrence wins")
    func lastDuplicateWins() {
        #expect(parsedEvent(eventJSON("track_id", "0")) == nil)
        let invalidThenValid = exampleEvent.dropLast() + #","track_id":0,"track_id":42}"#
        #expect(parsedEvent(String(invalidThenValid))?.trackID == 42)
        let validThenInvalid = exampleEvent.dropLast() + #","track_id":42,"track_id":"42"}"#
        #expect(rejectReason(String(validThenInvalid)) == .invalidField)
        let typeThenPlay = exampleEvent.dropLast() + #","type":"click","type":"play"}"#
        #expect(rejectReason(String(typeThenPlay)) == nil)
        let valueThenNull = exampleEvent.dropLast() + #","track_id":null}"#
        #expect(rejectReason(String(valueThenNull)) == .missingField)
    }

    @Test("the parser never reads past the end of the buffer it is given")
    func parserStaysInsideItsBuffer() {
        let bytes = Array((exampleEvent + "\n" + exampleEvent).utf8)
        bytes.withUnsafeBytes { all in
            let cut = exampleEvent.utf8.count
            // Without its closing brace, the first event is malformed even though a '}' follows in memory.
            let truncated = UnsafeRawBufferPointer(rebasing: all[0..<(cut - 1)])
            #expect((try? EventParser.parse(truncated).get()) == nil)
            let first = UnsafeRawBufferPointer(rebasing: all[0..<cut])
            #expect((try? EventParser.parse(first).get())?.trackID == 123_456)
            // A string cut short: the rest of the string is in memory, just beyond the buffer.
            let midString = UnsafeRawBufferPointer(rebasing: all[0..<20])
            if case .failure(let rejection) = EventParser.parse(midString) {
                #expect(rejection.reason == .malformedJSON)
                #expect(rejection.message.contains("end of the input"))
            } else {
                Issue.record("a truncated event parsed")
            }
        }
    }

    @Test("every collection of bytes can be parsed, contiguous or not")
    func collectionOverloads() {
        let expected = parsedEvent(exampleEvent)
        #expect(expected != nil)
        #expect((try? EventParser.parse(Array(exampleEvent.utf8)).get()) == expected)
        #expect((try? EventParser.parse(exampleEvent.utf8.lazy.map { $0 }).get()) == expected)
        #expect((try? EventParser.parse(ArraySlice(exampleEvent.utf8)).get()) == expected)
        #expect((try? EventParser.parse([UInt8]()).get()) == nil)
    }

    @Test("syntax rejections say where and what went wrong")
    func syntaxMessages() {
        #expect(rejection("{\"a\" 1}")?.message == "malformed JSON at byte 5: expected ':' after an object key")
        #expect(rejection("[]")?.message == "malformed JSON at byte 0: an event must be a JSON object")
        #expect(rejection("{\"a\":1")?.message == "malformed JSON at the end of the input: expected ',' or '}' in an object")
        #expect(rejection("{\"a\":\"\u{1}\"}")?.message.contains("control character") == true)
        #expect(rejection("{\"a\":1}")?.field == "event_id")
        #expect(rejection("   ")?.reason == .empty)
    }
}
