/// One valid event (docs/event-format.md), reduced to what counting needs: which signal it
/// counts for and with what weight (`type`), its track, its creator if it names one, its hour.
///
/// The optional fields (`listener_id`, `position_ms`, `duration_ms`, `client`, `country`) are
/// validated by `EventParser` but not kept here: this value stays small and free of heap storage
/// on the batch job's hot path, where it is copied out of every parse. Callers that count by
/// dimension ask `EventParser.parse(_:dimensions:)` for them.
public struct Event: Sendable, Hashable {
    public var eventID: EventID
    public var type: EventType
    public var trackID: Int64
    /// The creator the event names (`creator_id`), 0 when it names none.
    public var creatorID: Int64
    public var occurredAtMilliseconds: Int64

    @inlinable
    public init(eventID: EventID, type: EventType = .play, trackID: Int64, creatorID: Int64 = 0, occurredAtMilliseconds: Int64) {
        self.eventID = eventID
        self.type = type
        self.trackID = trackID
        self.creatorID = creatorID
        self.occurredAtMilliseconds = occurredAtMilliseconds
    }

    /// The UTC hour the event is counted in.
    @inlinable
    public var hour: Hour { Hour(epochMilliseconds: occurredAtMilliseconds) }
}

/// Why an event was rejected: the reason codes of docs/event-format.md, as counted by the consumer and
/// the batch job and shown by `/v1/status` and `/metrics`.
public enum RejectReason: String, Sendable, CaseIterable, Hashable {
    /// Not exactly one syntactically valid JSON object (including nesting deeper than
    /// `EventParser.maxNestingDepth`).
    case malformedJSON = "malformed_json"
    /// A required field is absent or `null`.
    case missingField = "missing_field"
    /// A known field has the wrong type or a value outside its rule.
    case invalidField = "invalid_field"
    /// `type` is a string other than the types of `EventType`.
    case unsupportedType = "unsupported_type"
    /// Larger than `EventLimits.maxEventBytes`; not parsed at all.
    case tooLarge = "too_large"
    /// Bytes that are not UTF-8 (in a string, or where a JSON token was expected).
    case invalidUTF8 = "invalid_utf8"
    /// A blank line or a null Kafka value: nothing to parse.
    case empty = "empty"
}

/// Why one event was rejected, with a message for the people reading `/v1/status`.
public struct EventRejection: Sendable, Error, Hashable, CustomStringConvertible {
    public var reason: RejectReason
    /// The field at fault (`"track_id"`), or `nil` when the fault is not in one field.
    public var field: String?
    /// One sentence, e.g. "track_id must be an integer between 1 and 9007199254740991".
    public var message: String

    public init(reason: RejectReason, field: String? = nil, message: String) {
        self.reason = reason
        self.field = field
        self.message = message
    }

    public var description: String { "\(reason.rawValue): \(message)" }
}
