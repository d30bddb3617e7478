/// The one way to ask work on another thread to stop. Whoever owns the work calls `request()`
/// (from any thread, as often as it likes); the work checks `isRequested` between steps,
/// sleeps with `sleep(for:)`, which a request cuts short, and registers with `onRequest` how
/// to wake a call that blocks elsewhere (a Kafka poll, a producer's poll). A signal, once
/// requested, stays requested.
public final class StopSignal: Sendable {
    private struct State {
        var requested = false
        var wakers: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    public init() {}

    /// Asks the work to stop and runs every waker. Returns true for the call that asked first,
    /// false once the stop was already requested.
    @discardableResult
    public func request() -> Bool {
        let wakers = state.withLock { state -> [@Sendable () -> Void]? in
            guard !state.requested else { return nil }
            state.requested = true
            defer { state.wakers = [] }
            return state.wakers
        }
        guard let wakers else { return false }
        for wake in wakers { wake() }
        return true
    }

    /// Whether a stop was requested.
    public var isRequested: Bool {
        state.withLock { $0.requested }
    }

    /// Sleeps for `duration`, or less when a stop is requested meanwhile; returns whether one
    /// was (at once, without sleeping, when it already had been).
    @discardableResult
    public func sleep(for duration: Duration) -> Bool {
        state.wait(until: \.requested, timeout: duration) { $0.requested }
    }

    /// Blocks until a stop is requested.
    public func wait() {
        state.wait(until: \.requested) { _ in }
    }

    /// Runs `wake` when a stop is requested — at once, on this thread, if it already was.
    public func onRequest(_ wake: @escaping @Sendable () -> Void) {
        let already = state.withLock { state -> Bool in
            if !state.requested { state.wakers.append(wake) }
            return state.requested
        }
        if already { wake() }
    }
}
