import CounterpointCore
import Runtime

/// What the polling thread publishes for `RealtimeConsumer.status()`: the consumer's one
/// `RealtimeStatus`, updated once per batch (and per rare event), read from any thread through
/// `Locked`, and what its rate is measured from.
struct LiveState {
    /// All but `eventsPerSecond`, which `snapshot` works out from the samples.
    var status: RealtimeStatus
    private let offsetGapCapacity: Int
    private let rateWindow: Duration
    /// (when, eventsConsumed then), oldest first, at least `sampleSpacing` apart.
    private var rateSamples: [(at: ContinuousClock.Instant, consumed: Int)] = []
    private static let sampleSpacing = Duration.milliseconds(100)

    init(rejectionSampleCapacity: Int, offsetGapCapacity: Int, rateWindow: Duration) {
        status = RealtimeStatus(rejections: RejectionLog(sampleCapacity: rejectionSampleCapacity, retention: .latest))
        self.offsetGapCapacity = max(0, offsetGapCapacity)
        self.rateWindow = rateWindow
    }

    mutating func recordConsumed(_ count: Int, at now: ContinuousClock.Instant) {
        if let last = rateSamples.last, now - last.at < Self.sampleSpacing {
            status.eventsConsumed += count
            return
        }
        // The sample holds the total before this batch: the batch arrived after it.
        rateSamples.append((now, status.eventsConsumed))
        status.eventsConsumed += count
        prune(now)
    }

    mutating func recordGap(_ gap: OffsetGap) {
        status.skippedEvents += gap.skippedEvents
        guard offsetGapCapacity > 0 else { return }
        if status.offsetGaps.count == offsetGapCapacity { status.offsetGaps.removeFirst() }
        status.offsetGaps.append(gap)
    }

    func snapshot(at now: ContinuousClock.Instant) -> RealtimeStatus {
        var snapshot = status
        snapshot.eventsPerSecond = eventsPerSecond(at: now)
        return snapshot
    }

    /// Events since the oldest sample inside the window, over the time since that sample.
    private func eventsPerSecond(at now: ContinuousClock.Instant) -> Double {
        guard let oldest = rateSamples.first(where: { now - $0.at <= rateWindow }) else { return 0 }
        let elapsed = now - oldest.at
        let seconds = elapsed.seconds
        guard seconds > 0.05 else { return 0 }
        return Double(status.eventsConsumed - oldest.consumed) / seconds
    }

    private mutating func prune(_ now: ContinuousClock.Instant) {
        let stale = rateSamples.prefix { now - $0.at > rateWindow }.count
        if stale > 0 { rateSamples.removeFirst(stale) }
    }
}
