import Runtime

/// The schedule of a paced replay: event `i` is due `i / rate` seconds after the origin.
///
/// The schedule is anchored to one instant rather than to the previous send, so sleeping too
/// long or sending late never accumulates: the achieved rate converges on the target whatever
/// the sleep granularity. Only a backlog beyond `maximumBacklog` events (a stalled producer)
/// moves the origin, so that a recovery is never followed by an unbounded burst.
struct Pacer {
    let rate: Double
    let maximumBacklog: Int
    private(set) var origin: ContinuousClock.Instant
    /// The index of the event due at `origin`.
    private(set) var originEvent = 0
    /// How many times the schedule was given up and restarted.
    private(set) var restarts = 0

    init(rate: Double, origin: ContinuousClock.Instant, maximumBacklog: Duration) {
        precondition(rate > 0 && rate.isFinite, "a pacer needs a positive rate")
        self.rate = rate
        self.origin = origin
        self.maximumBacklog = max(1, Int((rate * maximumBacklog.seconds).rounded(.up)))
    }

    /// How many events, counted from the first, may have been sent by `now`, given that
    /// `sent` have been: more than `sent` when some are due.
    mutating func allowance(at now: ContinuousClock.Instant, sent: Int) -> Int {
        let elapsed = max(0, (now - origin).seconds)
        let due = originEvent + Int((elapsed * rate).rounded(.down)) + 1
        if due - sent > maximumBacklog {
            origin = now
            originEvent = sent
            restarts += 1
            return sent + 1
        }
        return due
    }

    /// When the event with this index is due.
    func dueInstant(ofEvent index: Int) -> ContinuousClock.Instant {
        origin + .seconds(Double(index - originEvent) / rate)
    }
}
