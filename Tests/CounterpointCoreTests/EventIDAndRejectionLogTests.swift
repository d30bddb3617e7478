import Patience
import Testing
@testable import CounterpointCore

@Suite("Event identifiers", .onTestThreads)
struct EventIDTests {
    @Test("an identifier validates its text and gives it back")
    func validation() {
        #expect(EventID("01JD3Q6Z8W4N5V7K2M9P0R1S3T")?.text == "01JD3Q6Z8W4N5V7K2M9P0R1S3T")
        #expect(EventID(String(repeating: "z", count: 64))?.count == 64)
        #expect(EventID("") == nil)
        #expect(EventID(String(repeating: "z", count: 65)) == nil)
        #expect(EventID("a b") == nil)
        #expect(EventID("ü") == nil)
        #expect(EventID("a-b_C9")?.description == "a-b_C9")
    }

    @Test("every byte outside [A-Za-z0-9_-] is refused")
    func allowedBytes() {
        for byte in UInt8.min...UInt8.max {
            let allowed = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            #expect(EventID.isAllowed(byte) == allowed, "byte \(byte)")
        }
    }

    @Test("identifiers are equal and hash alike exactly when their text is equal")
    func equalityAndHashing() {
        let texts = ["a", "b", "ab", "a0", "a00", "0000000", "00000000", "000000000", String(repeating: "x", count: 64),
                     String(repeating: "x", count: 63)]
        let ids = texts.map { EventID($0)! }
        for (i, left) in ids.enumerated() {
            for (j, right) in ids.enumerated() {
                #expect((left == right) == (i == j))
            }
            #expect(EventID(texts[i])!.hashValue == left.hashValue)
        }
        #expect(Set(ids).count == texts.count)
    }

    @Test("withUnsafeBytes exposes exactly the identifier's bytes")
    func rawBytes() {
        let id = EventID("abc123")!
        #expect(id.withUnsafeBytes { Array($0) } == Array("abc123".utf8))
        let copy = id.withUnsafeBytes { EventID(validating: $0) }
        #expect(copy == id)
    }
}

@Suite("Rejection log", .onTestThreads)
struct RejectionLogTests {
    func reject(_ reason: RejectReason) -> EventRejection {
        EventRejection(reason: reason, message: "because \(reason.rawValue)")
    }

    func record(_ log: inout RejectionLog, _ reason: RejectReason, payload: String, source: String) {
        Array(payload.utf8).withUnsafeBytes { log.record(reject(reason), source: source, payload: $0) }
    }

    @Test("counts are exact while the sample keeps the first rejections")
    func firstSamples() {
        var log = RejectionLog(sampleCapacity: 2)
        for index in 1...5 { record(&log, index.isMultiple(of: 2) ? .empty : .malformedJSON, payload: "p\(index)", source: "f:\(index)") }
        #expect(log.total == 5)
        #expect(log.counts == [.malformedJSON: 3, .empty: 2])
        #expect(log.samples.map(\.source) == ["f:1", "f:2"])
        #expect(log.samples.first == RejectedSample(reason: .malformedJSON, source: "f:1", payloadPrefix: "p1",
                                                   message: "because malformed_json"))
    }

    @Test("the latest retention keeps the most recent rejections, oldest first")
    func latestSamples() {
        var log = RejectionLog(sampleCapacity: 2, retention: .latest)
        for index in 1...5 { record(&log, .tooLarge, payload: "p", source: "f:\(index)") }
        #expect(log.samples.map(\.source) == ["f:4", "f:5"])
        #expect(log.total == 5)
    }

    @Test("the source is only computed for a rejection that is kept as a sample")
    func sourceIsLazy() {
        var log = RejectionLog(sampleCapacity: 1)
        var evaluations = 0
        func source() -> String { evaluations += 1; return "s" }
        for _ in 0..<3 {
            Array("x".utf8).withUnsafeBytes { log.record(reject(.empty), source: source(), payload: $0) }
        }
        #expect(evaluations == 1)
        #expect(log.total == 3)
    }

    @Test("merging logs by their samples' keys keeps the first samples in key order, whichever log came first")
    func mergingByKeys() {
        // Two workers that each read every other chunk: each log's samples are in key order.
        var early = RejectionLog(sampleCapacity: 3), late = RejectionLog(sampleCapacity: 3)
        for line in [2, 5, 9] { record(&early, .malformedJSON, payload: "e", source: "f:\(line)") }
        for line in [1, 3, 4] { record(&late, .invalidField, payload: "l", source: "f:\(line)") }
        for parts in [[(early, [2, 5, 9]), (late, [1, 3, 4])], [(late, [1, 3, 4]), (early, [2, 5, 9])]] {
            var merged = RejectionLog(sampleCapacity: 4)
            let kept = merged.merge(parts.map { (log: $0.0, keys: $0.1) })
            #expect(merged.samples.map(\.source) == ["f:1", "f:2", "f:3", "f:4"])
            #expect(kept == [1, 2, 3, 4])
            #expect(merged.counts == [.malformedJSON: 3, .invalidField: 3])
        }
    }

    @Test("merging adds counts and fills the sample up to its capacity")
    func merging() {
        var left = RejectionLog(sampleCapacity: 3)
        var right = RejectionLog(sampleCapacity: 3)
        record(&left, .empty, payload: "a", source: "l:1")
        record(&right, .empty, payload: "b", source: "r:1")
        record(&right, .invalidField, payload: "c", source: "r:2")
        record(&right, .invalidField, payload: "d", source: "r:3")
        left.merge(right)
        #expect(left.counts == [.empty: 2, .invalidField: 2])
        #expect(left.total == 4)
        #expect(left.samples.map(\.source) == ["l:1", "r:1", "r:2"])
        #expect(RejectionLog().isEmpty)
        #expect(RejectionLog().total == 0)
    }

    @Test("a payload prefix is cut at 200 bytes, on a character boundary, with invalid UTF-8 replaced")
    func payloadPrefix() {
        var log = RejectionLog(sampleCapacity: 5)
        record(&log, .tooLarge, payload: String(repeating: "x", count: 500), source: "a")
        #expect(log.samples[0].payloadPrefix == String(repeating: "x", count: 200))
        // 199 ASCII bytes then a 2-byte character straddling the cut: the character is dropped whole.
        record(&log, .tooLarge, payload: String(repeating: "x", count: 199) + "éé", source: "b")
        #expect(log.samples[1].payloadPrefix == String(repeating: "x", count: 199))
        ([0x7B, 0xFF, 0x7D] as [UInt8]).withUnsafeBytes { log.record(reject(.invalidUTF8), source: "c", payload: $0) }
        #expect(log.samples[2].payloadPrefix == "{\u{FFFD}}")
        record(&log, .empty, payload: "", source: "d")
        #expect(log.samples[3].payloadPrefix == "")
    }

    @Test("a zero capacity keeps counts and no samples")
    func zeroCapacity() {
        var log = RejectionLog(sampleCapacity: 0, retention: .latest)
        record(&log, .empty, payload: "", source: "x")
        #expect(log.samples.isEmpty)
        #expect(log.total == 1)
    }
}
