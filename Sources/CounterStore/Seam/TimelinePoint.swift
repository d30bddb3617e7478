import CounterpointCore

/// One bucket of a timeline.
public struct TimelinePoint: Sendable, Hashable {
    /// The start of the bucket (an hour, or the first hour of a UTC day).
    public var start: Hour
    public var plays: Int64
    /// `.batch` when every hour of the bucket (within the range) is covered, `.realtime` when
    /// none is, `.mixed` otherwise.
    public var source: CountSource

    public init(start: Hour, plays: Int64, source: CountSource) {
        self.start = start
        self.plays = plays
        self.source = source
    }
}
