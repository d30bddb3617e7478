/// A UTC hour: the number of whole hours since 1970-01-01T00:00:00Z.
///
/// Counters are kept per (track, hour), so the hour is the unit of time everywhere in
/// Counterpoint. Storing it as a small integer keeps rows short and range scans cheap.
public struct Hour: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var index: Int64

    @inlinable
    public init(index: Int64) { self.index = index }

    /// The hour containing the instant `epochMilliseconds`, floored (also before 1970).
    @inlinable
    public init(epochMilliseconds: Int64) {
        self.index = Self.floorDivide(epochMilliseconds, 3_600_000)
    }

    /// The hour containing the instant `epochSeconds`, floored.
    @inlinable
    public init(epochSeconds: Int64) {
        self.index = Self.floorDivide(epochSeconds, 3_600)
    }

    public var epochSeconds: Int64 { index * 3_600 }

    /// The first hour of this hour's UTC day.
    public var startOfDay: Hour { Hour(index: Self.floorDivide(index, 24) * 24) }

    public func advanced(by hours: Int64) -> Hour { Hour(index: index + hours) }

    public static func < (lhs: Hour, rhs: Hour) -> Bool { lhs.index < rhs.index }

    public var description: String { UTCTime.format(epochSeconds: epochSeconds) }

    @usableFromInline
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

/// A half-open range of hours, `[lower, upper)`, as every `from`/`to` in the API is.
public struct HourRange: Hashable, Sendable, CustomStringConvertible {
    public var lower: Hour
    public var upper: Hour

    /// Creates `[lower, upper)`; an `upper` before `lower` gives an empty range at `lower`.
    public init(_ lower: Hour, _ upper: Hour) {
        self.lower = lower
        self.upper = max(lower, upper)
    }

    /// The range the API means by "all time": every hour an event may have (docs/event-format.md limits
    /// `occurred_at` to 2000-01-01 … 2100-01-01).
    public static let allTime = HourRange(Hour(index: EventLimits.earliestHourIndex),
                                          Hour(index: EventLimits.latestHourIndex))

    public var isEmpty: Bool { lower >= upper }
    public var count: Int64 { upper.index - lower.index }
    public func contains(_ hour: Hour) -> Bool { hour >= lower && hour < upper }

    public func clamped(to other: HourRange) -> HourRange {
        HourRange(max(lower, other.lower), min(upper, other.upper))
    }

    public var description: String { "[\(lower), \(upper))" }
}

/// The bounds docs/event-format.md puts on `occurred_at`.
public enum EventLimits {
    /// 2000-01-01T00:00:00Z in epoch milliseconds (inclusive).
    public static let earliestMilliseconds: Int64 = 946_684_800_000
    /// 2100-01-01T00:00:00Z in epoch milliseconds (exclusive).
    public static let latestMilliseconds: Int64 = 4_102_444_800_000
    public static let earliestHourIndex: Int64 = earliestMilliseconds / 3_600_000
    public static let latestHourIndex: Int64 = latestMilliseconds / 3_600_000
    /// The largest track id: 2^53 − 1, the largest integer a JSON number keeps exactly.
    public static let maxTrackID: Int64 = 9_007_199_254_740_991
    /// The largest creator id, for the same reason.
    public static let maxCreatorID: Int64 = maxTrackID
    /// Events larger than this are rejected as `too_large`.
    public static let maxEventBytes = 64 * 1024
}
