import CounterpointCore
import Runtime

/// What the polling thread publishes for `RealtimeConsumer.status()`: updated once per batch
/// (and per rare event), read from any thread through `Locked`.
struct LiveState {
    private(set) var eventsConsumed = 0
    var rejections: RejectionLog
    private(set) var offsetGaps: [OffsetGap] = []
    private(set) var skippedEvents: Int64 = 0
    var fencedFlushes = 0
    var lastFlush: FlushRecord?
    var flushFailure: FlushFailure?
    var assignedPartitions: [Int32] = []
    private let offsetGapCapacity: Int
    private let rateWindow: Duration
    /// (when, eventsConsumed then), oldest first, at least `sampleSpacing` apart.
    private var rateSamples: [(at: ContinuousClock.Instant, consumed: Int)] = []
    private static let sampleSpacing = Duration.milliseconds(100)

    init(rejectionSampleCapacity: Int, offsetGapCapacity: Int, rateWindow: Duration) {
        rejections = RejectionLog(sampleCapacity: rejectionSampleCapacity, retention: .latest)
        self.offsetGapCapacity = max(0, offsetGapCapacity)
        self.rateWindow = rateWindow
    }

    mutating func recordConsumed(_ count: Int, at now: ContinuousClock.Instant) {
        if let last = rateSamples.last, now - last.at < Self.sampleSpacing {
            eventsConsumed += count
            return
        }
        // The sample holds the total before this batch: the batch arrived after it.
        rateSamples.append((now, eventsConsumed))
        eventsConsumed += count
        prune(now)
    }

    mutating func recordGap(_ gap: OffsetGap) {
        skippedEvents += gap.skippedEvents
        guard offsetGapCapacity > 0 else { return }
        if offsetGaps.count == offsetGapCapacity { offsetGaps.removeFirst() }
        offsetGaps.append(gap)
    }

    func snapshot(at now: ContinuousClock.Instant) -> RealtimeStatus {
        RealtimeStatus(eventsPerSecond: eventsPerSecond(at: now), eventsConsumed: eventsConsumed,
                       rejections: rejections, offsetGaps: offsetGaps, skippedEvents: skippedEvents,
                       fencedFlushes: fencedFlushes, lastFlush: lastFlush, flushFailure: flushFailure,
                       assignedPartitions: assignedPartitions)
    }

    /// Events since the oldest sample inside the window, over the time since that sample.
    private func eventsPerSecond(at now: ContinuousClock.Instant) -> Double {
        guard let oldest = rateSamples.first(where: { now - $0.at <= rateWindow }) else { return 0 }
        let elapsed = now - oldest.at
        let seconds = elapsed.seconds
        guard seconds > 0.05 else { return 0 }
        return Double(eventsConsumed - oldest.consumed) / seconds
    }

    private mutating func prune(_ now: ContinuousClock.Instant) {
        let stale = rateSamples.prefix { now - $0.at > rateWindow }.count
        if stale > 0 { rateSamples.removeFirst(stale) }
    }
}
