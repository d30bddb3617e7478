import CounterpointCore

/// One bucket of a timeline.
public struct TimelinePoint: Sendable, Hashable {
    /// The start of the bucket (an hour, or the first hour of a UTC day).
    public var start: Hour
    /// The net count of the timeline's signal in the bucket (plays, or another `Signal`).
    public var count: Int64
    /// `.batch` when every hour of the bucket (within the range) is covered, `.realtime` when
    /// none is, `.mixed` otherwise.
    public var source: CountSource

    public init(start: Hour, count: Int64, source: CountSource) {
        self.start = start
        self.count = count
        self.source = source
    }
}

/// Every signal's merged total of a subject over a range, with what each layer gave
/// (`/v1/tracks/{id}/counts`): the merge rule applied to every hour of the range.
public struct MergedCounts: Sendable, Hashable {
    /// From covered hours (the batch layer).
    public var batch: SignalCounts
    /// From uncovered hours (the realtime layer).
    public var realtime: SignalCounts

    public init(batch: SignalCounts, realtime: SignalCounts) {
        self.batch = batch
        self.realtime = realtime
    }

    public var total: SignalCounts { batch + realtime }
}
