/// Lets a recurring log line through once per `interval` and counts the ones held back, so a
/// failure that every request meets (a store that cannot be read, under thousands of requests
/// a second) is said once every few seconds with how often it happened, not once per request.
public final class LogThrottle: Sendable {
    private struct State {
        var lastAdmitted: ContinuousClock.Instant?
        var held = 0
    }

    private let interval: Duration
    private let state = Locked(State())

    public init(every interval: Duration) {
        self.interval = interval
    }

    /// nil: hold this line back. Otherwise log it now; the value is how many lines were held
    /// back since the last one let through.
    public func admit(now: ContinuousClock.Instant = .now) -> Int? {
        state.withLock { state in
            if let last = state.lastAdmitted, now - last < interval {
                state.held += 1
                return nil
            }
            let held = state.held
            state = State(lastAdmitted: now, held: 0)
            return held
        }
    }
}
