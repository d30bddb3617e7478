import CounterpointCore

/// A track's merged plays over a range and their dimension counts, under the same merge rule
/// and from the same snapshots — so that plays without position, client or country (the plays
/// minus what the counts hold) are exact.
public struct TrackDimensions: Sendable, Equatable {
    public var plays: TrackPlays
    public var totals: DimensionTotals

    /// The waveform's 100 buckets.
    public var waveform: [Int64] { totals.waveform }

    /// Plays lacking position or duration: the merged plays minus the buckets' sum.
    public var playsWithoutPosition: Int64 {
        max(0, plays.plays - totals.waveform.reduce(0, &+))
    }

    /// docs/openapi.yaml's ordered breakdown by country or client, `nil` (without the field) last.
    public func breakdown(_ section: DimensionEncoding.Section) -> [(value: DimensionValue?, plays: Int64)] {
        Breakdown.ordered(totals.values(section), totalPlays: plays.plays)
    }

    public static func == (a: TrackDimensions, b: TrackDimensions) -> Bool {
        a.plays == b.plays && a.totals == b.totals
    }
}

/// Where on a track's waveform one signal's events sit over a range — plays (§5) or comments
/// (SPEC §11) — and the signal's merged net count, under the same merge rule and from the same
/// snapshots: `total` = the buckets' sum + `withoutPosition`.
public struct TrackWaveform: Sendable, Equatable {
    /// The signals that have a waveform.
    public static let signals: [Signal] = [.plays, .comments]

    public var signal: Signal
    /// `WaveformBucket.count` buckets.
    public var buckets: [Int64]
    /// The signal's merged net count over the range.
    public var total: Int64
    /// What lacks position or duration: the total minus the buckets' sum. Plays never go below 0;
    /// comments may, like any net count (a deletion without position of a comment with one).
    public var withoutPosition: Int64

    public init(signal: Signal, buckets: [Int64], total: Int64, withoutPosition: Int64) {
        self.signal = signal
        self.buckets = buckets
        self.total = total
        self.withoutPosition = withoutPosition
    }
}

extension CounterReader {
    /// The waveform of `signal` (one of `TrackWaveform.signals`) of `track` over `range`: the
    /// plays' as `dimensions` reads it; the comments' from the same blobs, beside the merged comments.
    public func waveform(track: Int64, in range: HourRange, signal: Signal = .plays) throws -> TrackWaveform {
        let subject = Subject.track(track)
        precondition(TrackWaveform.signals.contains(signal), "\(signal) has no waveform")
        guard signal == .comments else {
            let plays = try dimensions(track: track, in: range)
            return TrackWaveform(signal: .plays, buckets: plays.waveform, total: plays.plays.plays,
                                 withoutPosition: plays.playsWithoutPosition)
        }
        return try withSnapshot { state in
            let plan = self.plan(range, state)
            var sum = DimensionSum(subject)
            var comments: Int64 = 0
            for part in plan.batchParts {
                comments += try layers.batchCounts(subject, over: part).comments
                try layers.batchDimensions(subject, over: part) { try sum.add($0) }
            }
            if !plan.realtimeGaps.isEmpty {
                comments += try layers.realtimeCounts(subject, over: plan.realtimeGaps).comments
                try layers.realtimeDimensions(subject, over: plan.realtimeGaps) { try sum.add($0) }
            }
            let totals = try sum.totals()
            return TrackWaveform(signal: .comments, buckets: totals.commentsWaveform, total: comments,
                                 withoutPosition: comments - totals.commentsWaveform.reduce(0, &+))
        }
    }

    /// Merged plays and dimension counts of `subject` over `range`: covered hours from the batch
    /// layer's blobs (in the coarsest rollups that tile them), the rest from the realtime layer's.
    /// A creator's hold no waveform (a waveform is a track's).
    public func dimensions(_ subject: Subject, in range: HourRange) throws -> TrackDimensions {
        try withSnapshot { state in
            let plan = self.plan(range, state)
            var sum = DimensionSum(subject)
            let plays = try layers.trackDimensions(subject, batchParts: plan.batchParts, realtimeGaps: plan.realtimeGaps) { try sum.add($0) }
            return TrackDimensions(plays: plays, totals: try sum.totals())
        }
    }

    /// `dimensions(_:in:)` of a track.
    public func dimensions(track: Int64, in range: HourRange) throws -> TrackDimensions { try dimensions(.track(track), in: range) }
}

/// One of a creator's tracks (SPEC §11): every signal's net count over a range of the events
/// that named both — a row of the creator's table of tracks.
public struct CreatorTrack: Sendable, Hashable {
    public var trackID: Int64
    public var counts: SignalCounts

    public init(trackID: Int64, counts: SignalCounts) {
        self.trackID = trackID
        self.counts = counts
    }
}

extension CounterReader {
    /// The `limit` tracks of `creator` with the largest positive net count of `signal` over
    /// `range` among the events that named the creator, most first, ties by track id ascending,
    /// each with every signal's count. Read from the creator's own rows — their counts by track
    /// (`DimensionEncoding.Section.byTrack`), merged by the merge rule over the coarsest rollups
    /// that tile the range — so it costs the creator's rows of the range and the tracks they
    /// hold, never a row per track.
    public func tracks(ofCreator creator: Int64, in range: HourRange, signal: Signal = .plays, limit: Int) throws -> [CreatorTrack] {
        let totals = try dimensions(.creator(creator), in: range).totals
        var counts: [Int64: SignalCounts] = [:]
        for other in Signal.allCases {
            for (track, count) in totals.byTrack[other.ordinal] { counts[track, default: .zero][other] += count }
        }
        let ranked = counts.lazy.filter { $0.value[signal] > 0 }.map { CreatorTrack(trackID: $0.key, counts: $0.value) }
        return Array(ranked.sorted { a, b in
            a.counts[signal] != b.counts[signal] ? a.counts[signal] > b.counts[signal] : a.trackID < b.trackID
        }.prefix(max(0, limit)))
    }
}

/// The merge rule's sum of one subject's dimension blobs as a read lends them, one at a time.
private struct DimensionSum {
    let subject: Subject
    private var merged: [UInt8] = []
    private var scratch: [UInt8] = []

    init(_ subject: Subject) { self.subject = subject }

    mutating func add(_ blob: UnsafeRawBufferPointer) throws {
        let ok = merged.withUnsafeBytes { DimensionEncoding.merge($0, blob, into: &scratch) }
        guard ok else { throw CounterStoreError.malformedDimensions(subject) }
        swap(&merged, &scratch)
    }

    func totals() throws -> DimensionTotals {
        guard let totals = DimensionEncoding.decode(merged) else { throw CounterStoreError.malformedDimensions(subject) }
        return totals
    }
}
