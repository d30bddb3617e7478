/// The hours the batch layer has covered: a normalized set of disjoint, non-adjacent,
/// ascending hour ranges.
///
/// A batch run over `[from, to)` covers every hour in it, including hours in which a track
/// had no plays (docs/architecture.md), so coverage is kept as ranges, not derived from batch rows.
public struct Coverage: Hashable, Sendable {
    public private(set) var ranges: [HourRange]

    public init() { ranges = [] }

    public init<S: Sequence>(_ ranges: S) where S.Element == HourRange {
        self.ranges = []
        for range in ranges { insert(range) }
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// Adds `range`, merging it with the ranges it overlaps or touches.
    public mutating func insert(_ range: HourRange) {
        guard !range.isEmpty else { return }
        var merged = range
        var result: [HourRange] = []
        result.reserveCapacity(ranges.count + 1)
        var placed = false
        for existing in ranges {
            if existing.upper < merged.lower {
                result.append(existing)
            } else if merged.upper < existing.lower {
                if !placed { result.append(merged); placed = true }
                result.append(existing)
            } else {
                merged = HourRange(min(existing.lower, merged.lower), max(existing.upper, merged.upper))
            }
        }
        if !placed { result.append(merged) }
        ranges = result
    }

    public func contains(_ hour: Hour) -> Bool {
        // Binary search: the last range starting at or before `hour`.
        var low = 0, high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].lower <= hour { low = mid + 1 } else { high = mid }
        }
        return low > 0 && ranges[low - 1].contains(hour)
    }

    /// The parts of `range` that are covered, ascending.
    public func covered(within range: HourRange) -> [HourRange] {
        ranges.compactMap { covered in
            let part = covered.clamped(to: range)
            return part.isEmpty ? nil : part
        }
    }

    /// The parts of `range` that are not covered, ascending: where the realtime layer counts.
    public func uncovered(within range: HourRange) -> [HourRange] {
        var gaps: [HourRange] = []
        var cursor = range.lower
        for covered in ranges where covered.upper > range.lower && covered.lower < range.upper {
            if covered.lower > cursor { gaps.append(HourRange(cursor, covered.lower)) }
            cursor = max(cursor, covered.upper)
        }
        if cursor < range.upper { gaps.append(HourRange(cursor, range.upper)) }
        return gaps
    }

    /// The end of the contiguous coverage that freshness reports: the upper bound of the
    /// latest covered range (`nil` when the batch layer has covered nothing yet).
    public var coveredUntil: Hour? { ranges.last?.upper }
}
