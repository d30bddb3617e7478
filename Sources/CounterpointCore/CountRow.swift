/// Every signal's net count of one subject in one UTC hour: the unit of counting
/// (docs/architecture.md). `id` is the subject's: a track's, or a creator's in a creator's row
/// (SPEC §11). Aggregation (`HourCounts`) hands them on by column (`CountRowList`), and a store write
/// carries them with their blobs (`CounterRows`).
public struct CountRow: Hashable, Sendable {
    public var id: Int64
    public var hour: Hour
    public var counts: SignalCounts

    @inlinable
    public init(id: Int64, hour: Hour, counts: SignalCounts) {
        self.id = id
        self.hour = hour
        self.counts = counts
    }

    /// A row of plays alone.
    @inlinable
    public init(id: Int64, hour: Hour, plays: Int64) {
        self.init(id: id, hour: hour, counts: SignalCounts(plays: plays))
    }

    @inlinable
    public var plays: Int64 {
        get { counts.plays }
        set { counts.plays = newValue }
    }

    /// The order in which writers touch a (track_id, hour)-keyed index in one sweep.
    @inlinable
    public static func byTrackThenHour(_ a: CountRow, _ b: CountRow) -> Bool {
        a.id != b.id ? a.id < b.id : a.hour.index < b.hour.index
    }
}

/// A subject's merged plays over a range, and how much of them each layer contributed.
public struct TrackPlays: Sendable, Hashable {
    /// The subject's id: a track's, or a creator's.
    public var id: Int64
    /// `batchPlays + realtimePlays`: the merge rule applied to every hour of the range.
    public var plays: Int64
    /// Plays of covered hours (from the batch layer).
    public var batchPlays: Int64
    /// Plays of uncovered hours (from the realtime layer).
    public var realtimePlays: Int64

    public init(id: Int64, batchPlays: Int64, realtimePlays: Int64) {
        self.id = id
        self.plays = batchPlays + realtimePlays
        self.batchPlays = batchPlays
        self.realtimePlays = realtimePlays
    }

}

/// A subject's plays as rankings order them (`TrackPlays`, `RankedEntry`).
public protocol RankedByPlays {
    /// The subject's id: a track's, or a creator's.
    var id: Int64 { get }
    var plays: Int64 { get }
}

extension RankedByPlays {
    /// The ranking order of `/v1/top`: more plays first, then the lower id.
    @inlinable
    public static func ranksAbove(_ a: Self, _ b: Self) -> Bool {
        a.plays != b.plays ? a.plays > b.plays : a.id < b.id
    }
}

extension TrackPlays: RankedByPlays {}
