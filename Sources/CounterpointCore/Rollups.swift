/// The granularities the batch layer keeps its counts at: hours, and day and month sums of
/// them written in the same transaction (docs/architecture.md, "history does not slow anything down").
/// A query reads the coarsest buckets that fit its range, so its cost grows with the buckets
/// it touches — at most a few dozen — and not with the hours the range spans.
public enum RollupLevel: Int, Sendable, CaseIterable, Comparable {
    case hour, day, month

    /// The bucket of this level containing `hour`: the hour index, days since 1970-01-01, or
    /// months since 1970-01.
    public func key(of hour: Hour) -> Int64 {
        switch self {
        case .hour: hour.index
        case .day: UTCCalendar.day(of: hour)
        case .month: UTCCalendar.month(ofDay: UTCCalendar.day(of: hour))
        }
    }

    /// The first hour of bucket `key`.
    public func firstHour(ofKey key: Int64) -> Hour {
        switch self {
        case .hour: Hour(index: key)
        case .day: Hour(index: key * 24)
        case .month: Hour(index: UTCCalendar.firstDay(ofMonth: key) * 24)
        }
    }

    public static func < (lhs: RollupLevel, rhs: RollupLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Consecutive buckets `[lower, upper)` of one level.
public struct RollupSpan: Hashable, Sendable, CustomStringConvertible {
    public var level: RollupLevel
    public var lower: Int64
    public var upper: Int64

    public init(_ level: RollupLevel, _ lower: Int64, _ upper: Int64) {
        self.level = level
        self.lower = lower
        self.upper = upper
    }

    public var isEmpty: Bool { lower >= upper }

    /// The hours the span covers.
    public var hours: HourRange { HourRange(level.firstHour(ofKey: lower), level.firstHour(ofKey: upper)) }

    public var description: String { "\(level)[\(lower), \(upper))" }
}

/// An hour range cut into the coarsest buckets that tile it exactly: leading hours up to the
/// first whole day, leading days up to the first whole month, whole months, then trailing days
/// and trailing hours. Always these five slots (some empty), so a backend can sum a track over
/// all of them in one fixed-shape statement.
public struct RollupDecomposition: Hashable, Sendable {
    public var leadingHours: RollupSpan
    public var leadingDays: RollupSpan
    public var months: RollupSpan
    public var trailingDays: RollupSpan
    public var trailingHours: RollupSpan

    /// The slots, in time order (empty ones included).
    public var slots: [RollupSpan] { [leadingHours, leadingDays, months, trailingDays, trailingHours] }

    /// The non-empty slots, in time order.
    public var spans: [RollupSpan] { slots.filter { !$0.isEmpty } }

    /// Cuts `range` into buckets no coarser than `coarsest`.
    public init(_ range: HourRange, coarsest: RollupLevel = .month) {
        let none = { (level: RollupLevel) in RollupSpan(level, 0, 0) }
        leadingHours = none(.hour); leadingDays = none(.day); months = none(.month)
        trailingDays = none(.day); trailingHours = none(.hour)
        guard !range.isEmpty else { return }
        // Whole days inside the range: [firstDay, endDay).
        let firstDay = -Hour.floorDivide(-range.lower.index, 24)
        let endDay = Hour.floorDivide(range.upper.index, 24)
        guard coarsest > .hour, firstDay < endDay else {
            leadingHours = RollupSpan(.hour, range.lower.index, range.upper.index)
            return
        }
        leadingHours = RollupSpan(.hour, range.lower.index, firstDay * 24)
        trailingHours = RollupSpan(.hour, endDay * 24, range.upper.index)
        // Whole months inside the days: [firstMonth, endMonth).
        let monthOfFirstDay = UTCCalendar.month(ofDay: firstDay)
        let firstMonth = UTCCalendar.firstDay(ofMonth: monthOfFirstDay) == firstDay ? monthOfFirstDay : monthOfFirstDay + 1
        let endMonth = UTCCalendar.month(ofDay: endDay)
        guard coarsest > .day, firstMonth < endMonth else {
            leadingDays = RollupSpan(.day, firstDay, endDay)
            return
        }
        leadingDays = RollupSpan(.day, firstDay, UTCCalendar.firstDay(ofMonth: firstMonth))
        months = RollupSpan(.month, firstMonth, endMonth)
        trailingDays = RollupSpan(.day, UTCCalendar.firstDay(ofMonth: endMonth), endDay)
    }
}
