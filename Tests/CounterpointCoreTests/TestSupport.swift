@testable import CounterpointCore

/// The example event of docs/event-format.md, as (key, raw JSON value) pairs in document order.
let exampleFields: [(key: String, value: String)] = [
    ("event_id", #""01JD3Q6Z8W4N5V7K2M9P0R1S3T""#),
    ("type", #""play""#),
    ("track_id", "123456"),
    ("listener_id", "987"),
    ("occurred_at", #""2026-11-20T12:34:56.789Z""#),
    ("position_ms", "0"),
    ("duration_ms", "215000"),
    ("client", #""ios""#),
    ("country", #""DE""#),
]

let exampleEvent = eventJSON()

/// The example event with `field` set to `value` (raw JSON), or removed when `value` is nil;
/// a field the example lacks is appended.
func eventJSON(_ field: String? = nil, _ value: String? = nil) -> String {
    var fields = exampleFields
    if let field {
        if let index = fields.firstIndex(where: { $0.key == field }) {
            if let value { fields[index].value = value } else { fields.remove(at: index) }
        } else if let value {
            fields.append((field, value))
        }
    }
    return "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
}

/// The reason `text` is rejected for, or nil when it is a valid event.
func rejectReason(_ text: String) -> RejectReason? {
    rejectReason(Array(text.utf8))
}

func rejectReason(_ bytes: [UInt8]) -> RejectReason? {
    switch EventParser.parse(bytes) {
    case .success: nil
    case .failure(let rejection): rejection.reason
    }
}

func parsedEvent(_ text: String) -> Event? {
    try? EventParser.parse(text.utf8).get()
}

func rejection(_ text: String) -> EventRejection? {
    if case .failure(let rejection) = EventParser.parse(text.utf8) { return rejection }
    return nil
}

/// Epoch milliseconds of a UTC civil time, computed independently of the parser.
func epochMilliseconds(_ year: Int64, _ month: Int64, _ day: Int64,
                       _ hour: Int64 = 0, _ minute: Int64 = 0, _ second: Int64 = 0, _ millisecond: Int64 = 0) -> Int64 {
    let days = UTCTime.daysFromCivil(year: year, month: month, day: day)
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
}
