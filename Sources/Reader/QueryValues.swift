import CounterpointCore

/// The query string of one request, checked against the parameters its route accepts.
///
/// An unknown parameter is an error, not ignored: a typo such as `?form=` must never
/// silently answer all-time counts (docs/openapi.yaml). A parameter given twice is an error too,
/// because either choice would surprise someone.
struct QueryValues {
    private var values: [String: String] = [:]

    init(_ items: [(name: String, value: String)], allowed: Set<String>) throws(APIError) {
        for item in items {
            guard allowed.contains(item.name) else {
                let accepted = allowed.isEmpty ? "this route takes no parameters"
                    : "accepted: " + allowed.sorted().joined(separator: ", ")
                throw .badRequest("unknown_parameter", "unknown query parameter '\(Self.printable(item.name))'; \(accepted)")
            }
            guard values[item.name] == nil else {
                throw .badRequest("duplicate_parameter", "query parameter '\(item.name)' is given more than once")
            }
            values[item.name] = item.value
        }
    }

    /// The value of `name`; no lookup at all for a request without a query, as most are.
    subscript(name: String) -> String? { values.isEmpty ? nil : values[name] }

    /// The parameters of each kind of route, made once rather than on every request.
    static let noParameters: Set<String> = []
    static let rangeParameters: Set<String> = ["from", "to"]
    /// Those of list answers take `format` too (`ListFormat`).
    static let stepParameters: Set<String> = ["from", "to", "step", "format"]
    static let signalStepParameters: Set<String> = ["from", "to", "step", "format", "signal"]
    static let listRangeParameters: Set<String> = ["from", "to", "format"]
    static let multiTrackParameters: Set<String> = ["track_id", "from", "to", "format"]
    static let rankingParameters: Set<String> = ["from", "to", "limit", "format", "signal"]
    static let breakdownParameters: Set<String> = ["by", "from", "to", "format"]
    static let waveformParameters: Set<String> = ["from", "to", "signal"]

    /// `signal` (SPEC §11): one of `Signal`'s names; nil when absent (plays, answered as
    /// before the other signals: without naming the signal).
    func signal() throws(APIError) -> Signal? {
        guard let text = self["signal"] else { return nil }
        guard let signal = Signal(named: text) else {
            throw APIError.badRequest("invalid_signal", "'signal' must be one of "
                + Signal.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ", not '\(Self.printable(text))'")
        }
        return signal
    }

    /// `from`/`to` as an hour range, both floored to the hour; absent means all time on
    /// that side (or `defaultRange`'s bound when one is given).
    func hourRange(defaultRange: HourRange = .allTime) throws(APIError) -> HourRange {
        let requestedFrom = try hour(named: "from")
        let requestedTo = try hour(named: "to")
        if let requestedFrom, let requestedTo, requestedFrom > requestedTo {
            throw .badRequest("invalid_range", "'from' (\(requestedFrom)) is after 'to' (\(requestedTo))")
        }
        // A lone bound past the default on the other side is an empty range, not an error:
        // `?from=2150-01-01T00:00:00Z` asks for the plays after 2150, and there are none.
        let from = requestedFrom ?? defaultRange.lower
        let to = requestedTo ?? max(defaultRange.upper, from)
        // Hours outside the years events may carry hold no plays; clamping keeps the
        // arithmetic of day buckets and timelines inside sane bounds.
        return HourRange(from, to).clamped(to: .allTime)
    }

    func hour(named name: String) throws(APIError) -> Hour? {
        guard let text = self[name] else { return nil }
        guard let milliseconds = UTCTime.parseTimestamp(text) else {
            throw .badRequest("invalid_time",
                              "'\(name)' must be an RFC 3339 UTC time such as 2026-11-20T10:00:00Z, not '\(Self.printable(text))'")
        }
        return Hour(epochMilliseconds: milliseconds)
    }

    func integer(named name: String, default defaultValue: Int, range: ClosedRange<Int>) throws(APIError) -> Int {
        guard let text = self[name] else { return defaultValue }
        guard let value = Int(text), range.contains(value), text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw .badRequest("invalid_\(name)", "'\(name)' must be an integer between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    /// A track id: ASCII digits only (no sign, no spaces), 1 … 2^53 − 1.
    static func trackID<S: Collection<UInt8>>(_ digits: S) -> Int64? {
        guard !digits.isEmpty, digits.count <= 20 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            if value > EventLimits.maxTrackID { return nil }
        }
        return value >= 1 ? value : nil
    }

    /// A value quoted back in an error message, cut short and stripped of control bytes
    /// so that hostile input cannot bloat or garble the answer.
    static func printable(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.prefix(64).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return text.unicodeScalars.count > 64 ? cleaned + "…" : cleaned
    }
}
