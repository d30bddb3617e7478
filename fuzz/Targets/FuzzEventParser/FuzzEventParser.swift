@testable import CounterpointCore
import FuzzSupport

/// libFuzzer entry for the event parser (docs/fuzzing.md): any bytes, as one Kafka value or one
/// log line. Besides "no crash", it checks what an accepted event promises the rest of the
/// system, that an accepted event written back as JSON parses to the same event, and that the
/// shortcuts for an event's usual shape give the general path's answer.
@main
enum FuzzDriver {
    static func main() { runLibFuzzer(fuzzEventParser) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var dimensions = PlayDimensions(), generalDimensions = PlayDimensions()
    let result = EventParser.parse(bytes, dimensions: &dimensions)
    let general = EventParser.parse(bytes, dimensions: &generalDimensions, fastPaths: false)
    check(result == general, "the shortcuts and the general path disagree")
    if case .success = result { check(dimensions == generalDimensions, "the shortcuts and the general path read other dimensions") }
    switch result {
    case .failure(let rejection):
        check(!rejection.message.isEmpty, "a rejection without a message")
        check((rejection.reason == .tooLarge) == (size > EventLimits.maxEventBytes), "too_large is decided by the size alone")
    case .success(let event):
        checkRules(event, dimensions, size: size)
        check(String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) != nil,
              "an accepted event that is not UTF-8")
        var reparsedDimensions = PlayDimensions()
        let written = canonicalJSON(event, dimensions)
        guard case .success(let reparsed) = written.withUnsafeBytes({ EventParser.parse($0, dimensions: &reparsedDimensions) }) else {
            fatalError("an accepted event written back as JSON is rejected: \(String(decoding: written, as: UTF8.self))")
        }
        check(reparsed == event, "an accepted event written back as JSON parses to another event")
        check(reparsedDimensions.client == dimensions.client && reparsedDimensions.country == dimensions.country,
              "an accepted event's client or country changes when written back as JSON")
    }
    return 0
}

/// The rules of docs/event-format.md, checked on what the parser accepted.
func checkRules(_ event: Event, _ dimensions: PlayDimensions, size: Int) {
    check(size <= EventLimits.maxEventBytes, "an accepted event over the size limit")
    let id = event.eventID.text.utf8
    check((1...EventID.maxLength).contains(id.count), "an accepted event_id of \(id.count) bytes")
    check(id.allSatisfy(isIDByte), "an accepted event_id with a byte outside [A-Za-z0-9_-]")
    check((1...EventLimits.maxTrackID).contains(event.trackID), "an accepted track_id out of range: \(event.trackID)")
    check(event.creatorID == 0 || (1...EventLimits.maxCreatorID).contains(event.creatorID),
          "an accepted creator_id out of range: \(event.creatorID)")
    check(event.occurredAtMilliseconds >= EventLimits.earliestMilliseconds
          && event.occurredAtMilliseconds < EventLimits.latestMilliseconds,
          "an accepted occurred_at out of range: \(event.occurredAtMilliseconds)")
    if let bucket = dimensions.waveformBucket {
        check((0..<Int8(WaveformBucket.count)).contains(bucket), "a waveform bucket out of range: \(bucket)")
    }
    for value in [dimensions.client, dimensions.country].compactMap({ $0 }) {
        check(value.count <= DimensionValue.maxLength, "a dimension value over 32 bytes")
        check(String(validating: value.bytes, as: UTF8.self) != nil, "a dimension value that is not UTF-8")
    }
}

func isIDByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
         UInt8(ascii: "_"), UInt8(ascii: "-"): true
    default: false
    }
}

/// The event as a producer would write it, strings escaped by a writer independent of the parser.
func canonicalJSON(_ event: Event, _ dimensions: PlayDimensions) -> [UInt8] {
    var out = Array(#"{"event_id":"\#(event.eventID.text)","type":"\#(event.type.name)","track_id":\#(event.trackID),"#.utf8)
    out += Array(#""occurred_at":\#(event.occurredAtMilliseconds)"#.utf8)
    if event.creatorID != 0 { out += Array(#","creator_id":\#(event.creatorID)"#.utf8) }
    for (name, value) in [("client", dimensions.client), ("country", dimensions.country)] {
        guard let value else { continue }
        out += Array(",\"\(name)\":\"".utf8)
        for byte in value.bytes {
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            } else {
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
    out.append(UInt8(ascii: "}"))
    return out
}
