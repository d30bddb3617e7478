import CounterpointCore

/// A track's distinct listeners over a range (docs/listeners.md): the union of the batch
/// sketches of the covered hours and the realtime sketches of the others, from the same
/// snapshots as its merged plays.
public struct TrackListeners: Sendable, Equatable {
    public var trackID: Int64
    /// The union's cardinality, rounded to the nearest integer.
    public var listeners: Int64
    /// True while the union holds every listener's hash (an exact count, no estimate).
    public var exact: Bool
    public var plays: TrackPlays
    /// Plays that carried a listener id.
    public var listenerPlays: Int64

    /// Plays without a listener id: the merged plays minus those that carried one.
    public var playsWithoutListener: Int64 { max(0, plays.plays - listenerPlays) }
}

/// One bucket of a listener timeline.
public struct ListenerPoint: Sendable, Hashable {
    public var start: Hour
    public var listeners: Int64
    public var exact: Bool
    public var source: CountSource
}

extension CounterReader {
    /// Distinct listeners of `track` over `range`: covered hours from the batch layer's sketches
    /// (in the coarsest rollups that tile them: at most five rows per covered part, whatever
    /// the range), the rest from the realtime layer's. Throws
    /// `CounterStoreError.malformedListeners` when a stored sketch does not decode.
    public func listeners(_ subject: Subject, in range: HourRange) throws -> TrackListeners {
        let track = subject.id
        return try withSnapshot { state in
            let plan = self.plan(range, state)
            let plays = try plays(subject, plan: plan)
            var union = SketchUnion(subject)
            for part in plan.batchParts {
                try layers.batchListeners(subject, over: part) { try union.add($0, $1) }
            }
            for gap in plan.realtimeGaps {
                try layers.realtimeListeners(subject, in: gap) { try union.add($1, $2) }
            }
            return TrackListeners(trackID: track, listeners: union.listeners, exact: union.sketch.isExact, plays: plays,
                                  listenerPlays: union.listenerPlays)
        }
    }

    /// Distinct listeners per bucket of `range`, zero-filled: each bucket the union of its
    /// batch rollup rows (days for day buckets) and realtime hours. The caller bounds the
    /// bucket count.
    public func listenerTimeline(_ subject: Subject, in range: HourRange, step: TimelineStep) throws -> [ListenerPoint] {
        guard !range.isEmpty else { return [] }
        let buckets = TimelineBuckets(range: range, step: step)
        return try withSnapshot { state in
            let plan = self.plan(range, state, coarsest: step == .day ? .day : .hour)
            var unions = [SketchUnion](repeating: SketchUnion(subject), count: buckets.count)
            for span in plan.batchSpans {
                try layers.batchListenerBuckets(subject, in: span) { key, plays, sketch in
                    try unions[buckets.index(of: span.level.firstHour(ofKey: key))].add(plays, sketch)
                }
            }
            for gap in plan.realtimeGaps {
                try layers.realtimeListeners(subject, in: gap) { hour, plays, sketch in
                    try unions[buckets.index(of: hour)].add(plays, sketch)
                }
            }
            let sources = buckets.sources(state.coverage)
            return (0..<buckets.count).map { index in
                ListenerPoint(start: buckets.start(index), listeners: unions[index].listeners, exact: unions[index].sketch.isExact,
                              source: sources[index])
            }
        }
    }

    /// `listeners(_:in:)` of a track.
    public func listeners(track: Int64, in range: HourRange) throws -> TrackListeners { try listeners(.track(track), in: range) }

    /// `listenerTimeline(_:in:step:)` of a track.
    public func listenerTimeline(track: Int64, in range: HourRange, step: TimelineStep) throws -> [ListenerPoint] {
        try listenerTimeline(.track(track), in: range, step: step)
    }
}
