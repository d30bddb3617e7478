/// Parses and validates one event (docs/event-format.md) from its raw bytes: one Kafka value or one
/// NDJSON line.
///
/// The whole input must be exactly one JSON object (RFC 8259), optionally surrounded by JSON
/// whitespace. Unknown fields of any shape are skipped but still validated as JSON, nested at
/// most `maxNestingDepth` deep. The parser works in place on the borrowed bytes and allocates
/// nothing for a valid event; messages are built only once an event has failed.
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

    public static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<PlayEvent, EventRejection> {
        var dimensions = PlayDimensions()
        return parse(bytes, dimensions: &dimensions)
    }

    /// Also sets `dimensions` to the waveform bucket, client and country of a valid event (left
    /// unspecified for a rejected one). Written through `inout` rather than returned in the
    /// event, so that callers that do not count by dimension copy nothing more per event.
    public static func parse(_ bytes: UnsafeRawBufferPointer, dimensions: inout PlayDimensions) -> Result<PlayEvent, EventRejection> {
        guard bytes.count <= EventLimits.maxEventBytes else {
            return .failure(EventRejection(
                reason: .tooLarge,
                message: "event is \(bytes.count) bytes, more than the limit of \(EventLimits.maxEventBytes)"))
        }
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .failure(emptyRejection) }
        var parsing = EventParsing(base: base, count: bytes.count)
        let result = parsing.run()
        if case .success = result { dimensions = parsing.dimensions }
        return result
    }

    /// Convenience for arrays, `String.utf8` and other collections of bytes.
    public static func parse(_ bytes: some Collection<UInt8>) -> Result<PlayEvent, EventRejection> {
        if let result = bytes.withContiguousStorageIfAvailable({ parse(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes { parse($0) }
    }

    static var emptyRejection: EventRejection {
        EventRejection(reason: .empty, message: "event is empty (a blank line or a null message value)")
    }
}
