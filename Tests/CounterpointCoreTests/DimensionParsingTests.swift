import Foundation
import Patience
import Testing
@testable import CounterpointCore

/// What the parser keeps of position, duration, client and country (docs/event-format.md, docs/openapi.yaml), with the
/// bucket checked against exact decimal arithmetic rather than the product's integer formula.
/// The dimensions the parser hands over with a valid event; nil for a rejected one.
func parsedDimensions(_ text: String) -> PlayDimensions? {
    var dimensions = PlayDimensions()
    let bytes = Array(text.utf8)
    guard case .success = bytes.withUnsafeBytes({ EventParser.parse($0, dimensions: &dimensions) }) else { return nil }
    return dimensions
}

@Suite("Dimensions of parsed events", .onTestThreads)
struct DimensionParsingTests {
    /// docs/openapi.yaml's bucket, computed with `Decimal` (38 significant digits: exact for these sizes).
    static func referenceBucket(_ position: Int64, _ duration: Int64) -> Int {
        var quotient = Decimal(position) * 100 / Decimal(duration)
        var floored = Decimal()
        NSDecimalRound(&floored, &quotient, 0, .down)
        return floored >= 99 ? 99 : NSDecimalNumber(decimal: floored).intValue
    }

    @Test("the bucket is min(99, ⌊100 × position / duration⌋), exact up to the largest integers", arguments: [
        (0, 1), (0, 215_000), (2_149, 215_000), (2_150, 215_000), (214_999, 215_000), (215_000, 215_000),
        (10_000_000, 215_000), (1, 3), (2, 3), (33, 100), (9_007_199_254_740_990, 9_007_199_254_740_991),
        (9_007_199_254_740_991, 9_007_199_254_740_991), (4_503_599_627_370_496, 9_007_199_254_740_991),
        (92_233_720_368_547_758, 9_223_372_036_854_775_807), (9_223_372_036_854_775_806, 9_223_372_036_854_775_807),
        (Int64.max, 1), (1, Int64.max),
    ] as [(Int64, Int64)])
    func bucketFormula(position: Int64, duration: Int64) {
        #expect(WaveformBucket.of(positionMilliseconds: position, durationMilliseconds: duration)
                == Self.referenceBucket(position, duration))
    }

    @Test("random positions and durations up to 2^53 − 1 land in the exact bucket")
    func randomBuckets() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let duration = Int64.random(in: 1...9_007_199_254_740_991, using: &random) >> Int64.random(in: 0...52, using: &random)
            let position = Int64.random(in: 0...(duration + duration / 4), using: &random)
            let maxDuration = max(duration, 1)
            #expect(WaveformBucket.of(positionMilliseconds: position, durationMilliseconds: maxDuration)
                    == Self.referenceBucket(position, maxDuration))
        }
    }

    @Test("an event keeps its bucket, client and country as sent")
    func keepsDimensions() throws {
        let dimensions = try #require(parsedDimensions(eventJSON("position_ms", "107500")))
        #expect(dimensions == PlayDimensions(waveformBucket: 50, client: DimensionValue("ios"), country: DimensionValue("DE"),
                                             listenerID: 987))
    }

    @Test("an event keeps its listener id; without one (or null) it has none")
    func listenerID() throws {
        #expect(parsedDimensions(eventJSON("listener_id", "0"))?.listenerID == 0)
        #expect(parsedDimensions(eventJSON("listener_id", "9223372036854775807"))?.listenerID == Int64.max)
        #expect(parsedDimensions(eventJSON("listener_id", nil))?.listenerID == nil)
        #expect(parsedDimensions(eventJSON("listener_id", "null"))?.listenerID == nil)
        #expect(rejectReason(eventJSON("listener_id", "-1")) == .invalidField)
    }

    @Test("a play without position or duration has no bucket; without client or country, none of those")
    func absentFields() throws {
        #expect(parsedDimensions(eventJSON("position_ms", nil))?.waveformBucket == nil)
        #expect(parsedDimensions(eventJSON("duration_ms", nil))?.waveformBucket == nil)
        #expect(parsedDimensions(eventJSON("position_ms", "null"))?.waveformBucket == nil)
        #expect(parsedDimensions(eventJSON("client", nil))?.client == nil)
        #expect(parsedDimensions(eventJSON("country", "null"))?.country == nil)
        #expect(parsedDimensions(eventJSON("country", "null"))?.client == DimensionValue("ios"))
    }

    @Test("a position at or past the duration counts in bucket 99")
    func positionPastDuration() {
        #expect(parsedDimensions(eventJSON("position_ms", "215000"))?.waveformBucket == 99)
        #expect(parsedDimensions(eventJSON("position_ms", "9007199254740991"))?.waveformBucket == 99)
    }

    @Test("negative positions, durations of 0, 33-byte countries and non-UTF-8 values are rejected")
    func badValues() {
        #expect(rejectReason(eventJSON("position_ms", "-1")) == .invalidField)
        #expect(rejectReason(eventJSON("duration_ms", "0")) == .invalidField)
        #expect(rejectReason(eventJSON("country", "\"\(String(repeating: "X", count: 33))\"")) == .invalidField)
        #expect(rejectReason(eventJSON("client", "\"\(String(repeating: "é", count: 17))\"")) == .invalidField)
        #expect(parsedDimensions(eventJSON("country", "\"\(String(repeating: "X", count: 32))\""))?.country
                == DimensionValue(String(repeating: "X", count: 32)))
        var bytes = Array(eventJSON("country", "\"DX\"").utf8)
        let index = bytes.firstIndex(of: UInt8(ascii: "X"))!
        bytes[index] = 0xFF
        #expect(rejectReason(bytes) == .invalidUTF8)
    }

    @Test("escaped values are kept unescaped; the last occurrence of a key wins")
    func escapesAndDuplicates() {
        #expect(parsedDimensions(eventJSON("country", #""\u0044E""#))?.country == DimensionValue("DE"))
        #expect(parsedDimensions(eventJSON("client", #""a\"b""#))?.client == DimensionValue("a\"b"))
        #expect(parsedDimensions(eventJSON("client", #""""#))?.client == DimensionValue(""))
        let twice = #"{"event_id":"A","type":"play","track_id":1,"occurred_at":0,"country":"SE","country":"NO","position_ms":5,"duration_ms":10,"position_ms":null}"#
        let event = parsedDimensions(#"{"event_id":"A","type":"play","track_id":1,"occurred_at":1000000000000,"country":"SE","country":"NO"}"#)
        #expect(event?.country == DimensionValue("NO"))
        #expect(rejectReason(twice) == .invalidField) // occurred_at 0 is before 2000
        let cleared = parsedDimensions(#"{"event_id":"A","type":"play","track_id":1,"occurred_at":1000000000000,"position_ms":5,"duration_ms":10,"position_ms":null}"#)
        #expect(cleared != nil && cleared?.waveformBucket == nil)
    }
}
