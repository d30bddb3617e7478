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

extension CounterReader {
    /// Merged plays and dimension counts of `subject` over `range`: covered hours from the batch
    /// layer's blobs (in the coarsest rollups that tile them), the rest from the realtime layer's.
    /// A creator's hold no waveform (a waveform is a track's).
    public func dimensions(_ subject: Subject, in range: HourRange) throws -> TrackDimensions {
        let track = subject.id
        return try withSnapshot { state in
            let plan = self.plan(range, state)
            var merged: [UInt8] = []
            var scratch: [UInt8] = []
            let plays = try layers.trackDimensions(subject, batchParts: plan.batchParts, realtimeGaps: plan.realtimeGaps) { blob in
                let ok = merged.withUnsafeBytes { DimensionEncoding.merge($0, blob, into: &scratch) }
                guard ok else { throw CounterStoreError.malformedDimensions(trackID: track) }
                swap(&merged, &scratch)
            }
            guard let totals = DimensionEncoding.decode(merged) else { throw CounterStoreError.malformedDimensions(trackID: track) }
            return TrackDimensions(plays: plays, totals: totals)
        }
    }

    /// `dimensions(_:in:)` of a track.
    public func dimensions(track: Int64, in range: HourRange) throws -> TrackDimensions { try dimensions(.track(track), in: range) }
}
