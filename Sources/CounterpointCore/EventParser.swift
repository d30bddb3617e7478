/// Parses and validates one event (docs/event-format.md) from its raw bytes: one Kafka value or one
/// NDJSON line.
///
/// The whole input must be exactly one JSON object (RFC 8259), optionally surrounded by JSON
/// whitespace. Unknown fields of any shape are skipped but still validated as JSON, nested at
/// most `maxNestingDepth` deep. The parser works in place on the borrowed bytes and allocates
/// nothing for a valid event; messages are built only once an event has failed. Members written
/// the usual way (`"key":` with no space, in docs/event-format.md's order; plain ids, `"play"`,
/// short strings and integers) are read by word-at-a-time shortcuts, which fall back to the
/// general path whenever the bytes are anything else; a randomized test and the fuzz target hold
/// both to the same answers.
///
/// Decisions where docs/event-format.md is silent:
/// - **Which reason wins** when an event breaks several rules: `too_large` (decided from the
///   size alone, nothing is parsed), then `empty` (only JSON whitespace), then the first
///   syntax or encoding fault in document order (`malformed_json` or `invalid_utf8`: a
///   rejection is never about a field of a document that is not JSON), then
///   `unsupported_type`, then `invalid_field` for the first faulty field in the order
///   `event_id`, `type`, `track_id`, `occurred_at`, `listener_id`, `position_ms`,
///   `duration_ms`, `client`, `country`, then `missing_field` for the first absent one of
///   `event_id`, `type`, `track_id`, `occurred_at`.
/// - **Invalid UTF-8** is `invalid_utf8` wherever it occurs; other stray bytes outside
///   strings are `malformed_json`.
/// - **Duplicate keys**: the last occurrence wins (an earlier invalid value is forgotten),
///   as in most JSON parsers.
/// - **`null`** means absent, for every known field: optional fields may be `null`; a
///   required one that is `null` is a `missing_field`.
/// - **Integers** are JSON numbers written without fraction or exponent: `1.0`, `1e3` and
///   `"123"` are `invalid_field`, as is any integer beyond 64 bits (never a crash). `-0` is 0.
/// - **`event_id`** is checked after unescaping, so `"\u0041BC"` is `ABC`; its length is
///   counted in bytes (all allowed characters are one byte).
/// - **`client`, `country`**: any string of at most 32 UTF-8 bytes after unescaping,
///   including the empty string.
/// - **`occurred_at`** strings follow `UTCTime.parseTimestamp`; fractions are truncated to
///   milliseconds; the range check is 2000-01-01T00:00:00Z ≤ t < 2100-01-01T00:00:00Z.
public enum EventParser {
    /// The deepest nesting of objects and arrays accepted, counting the event object itself:
    /// deeper input is `malformed_json`, never a stack overflow.
    public static let maxNestingDepth = 64

    public static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<Event, EventRejection> {
        var dimensions = PlayDimensions()
        return parse(bytes, dimensions: &dimensions)
    }

    /// Also sets `dimensions` to the waveform bucket, client and country of a valid event (left
    /// unspecified for a rejected one). Written through `inout` rather than returned in the
    /// event, so that callers that do not count by dimension copy nothing more per event.
    public static func parse(_ bytes: UnsafeRawBufferPointer, dimensions: inout PlayDimensions) -> Result<Event, EventRejection> {
        parse(bytes, dimensions: &dimensions, fastPaths: true)
    }

    /// `fastPaths: false` reads every member by the general path only: the tests hold the
    /// shortcuts for the usual shape of an event (`EventParsing.matchesKey` and the value
    /// shortcuts) to the same answers, offsets in messages included.
    @inline(__always)
    static func parse(_ bytes: UnsafeRawBufferPointer, dimensions: inout PlayDimensions, fastPaths: Bool) -> Result<Event, EventRejection> {
        guard bytes.count <= EventLimits.maxEventBytes else {
            return .failure(EventRejection(
                reason: .tooLarge,
                message: "event is \(bytes.count) bytes, more than the limit of \(EventLimits.maxEventBytes)"))
        }
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .failure(emptyRejection) }
        var parsing = EventParsing(base: base, count: bytes.count, fastPaths: fastPaths)
        let result = parsing.run()
        if case .success = result { dimensions = parsing.dimensions }
        return result
    }

    /// Convenience for arrays, `String.utf8` and other collections of bytes.
    public static func parse(_ bytes: some Collection<UInt8>) -> Result<Event, EventRejection> {
        if let result = bytes.withContiguousStorageIfAvailable({ parse(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes { parse($0) }
    }

    static var emptyRejection: EventRejection {
        EventRejection(reason: .empty, message: "event is empty (a blank line or a null message value)")
    }
}
