/// Where each part of a range is read from under the merge rule (docs/architecture.md), worked out once,
/// before any store is touched: covered hours from the batch layer — in the coarsest rollup
/// buckets that tile them — and uncovered hours from the realtime layer.
///
/// Batch rows exist only in covered hours (a batch run writes inside the range it marks
/// covered, and coverage never shrinks), and realtime rows of covered hours are never read, so
/// the merged total of a range is Σ batch over `batchParts` + Σ realtime over `realtimeGaps`.
public struct MergePlan: Hashable, Sendable {
    public let range: HourRange
    /// The covered parts of `range`, each cut into rollup buckets.
    public let batchParts: [RollupDecomposition]
    /// The uncovered parts of `range`, ascending.
    public let realtimeGaps: [HourRange]

    /// - Parameter coarsest: the coarsest rollup the caller can use (`.day` for day buckets,
    ///   `.hour` for hour buckets, `.month` for sums).
    public init(range: HourRange, coverage: Coverage, coarsest: RollupLevel = .month) {
        self.range = range
        batchParts = coverage.covered(within: range).map { RollupDecomposition($0, coarsest: coarsest) }
        realtimeGaps = coverage.uncovered(within: range)
    }

    /// Every non-empty batch span, in time order.
    public var batchSpans: [RollupSpan] { batchParts.flatMap(\.spans) }
}

/// The buckets of a timeline: bucket `i` starts at `firstStart + i·step` and counts the hours
/// of the range inside it. Day buckets are UTC days.
public struct TimelineBuckets: Sendable {
    public let range: HourRange
    public let step: TimelineStep
    private let width: Int64
    private let firstStart: Int64
    public let count: Int

    public init(range: HourRange, step: TimelineStep) {
        self.range = range
        self.step = step
        width = step.hours
        firstStart = step.bucketStart(of: range.lower).index
        count = range.isEmpty ? 0 : Int((range.upper.index - 1 - firstStart) / width) + 1
    }

    /// The bucket holding `hour` (which must lie in the range).
    @inlinable
    public func index(of hour: Hour) -> Int { Int((hour.index - start(0).index) / step.hours) }

    public func start(_ index: Int) -> Hour { Hour(index: firstStart + Int64(index) * width) }

    /// How many hours of the range bucket `index` holds (fewer than the step at a ragged edge).
    public func hoursInRange(_ index: Int) -> Int64 {
        let lower = firstStart + Int64(index) * width
        return min(lower + width, range.upper.index) - max(lower, range.lower.index)
    }

    /// Which layer answered each bucket: `.batch` when every hour of the bucket in the range is
    /// covered, `.realtime` when none is, `.mixed` otherwise.
    public func sources(_ coverage: Coverage) -> [CountSource] {
        var covered = [Int64](repeating: 0, count: count)
        for part in coverage.covered(within: range) {
            var cursor = part.lower.index
            while cursor < part.upper.index {
                let bucket = index(of: Hour(index: cursor))
                let end = min(firstStart + Int64(bucket + 1) * width, part.upper.index)
                covered[bucket] += end - cursor
                cursor = end
            }
        }
        return covered.indices.map { index in
            covered[index] == 0 ? .realtime : covered[index] == hoursInRange(index) ? .batch : .mixed
        }
    }
}
