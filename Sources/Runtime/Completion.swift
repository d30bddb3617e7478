/// A result that one thread provides once and that others wait for: blocking threads with
/// `wait()`, async code with `await result` — which suspends without polling and without
/// holding a thread of Swift's cooperative pool.
public final class Completion<Value: Sendable>: Sendable {
    private struct State {
        var outcome: Result<Value, any Error>?
        var waiters: [CheckedContinuation<Result<Value, any Error>, Never>] = []
    }

    private let state = Locked(State())

    public init() {}

    /// Provides the result and wakes every waiter. Only the first call counts; returns
    /// whether it was this one.
    @discardableResult
    public func complete(_ result: Result<Value, any Error>) -> Bool {
        let resumed = state.withLock { state -> [CheckedContinuation<Result<Value, any Error>, Never>]? in
            guard state.outcome == nil else { return nil }
            state.outcome = result
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let resumed else { return false }
        for waiter in resumed { waiter.resume(returning: result) }
        return true
    }

    /// The result if there is one already, without waiting.
    public var finished: Result<Value, any Error>? {
        state.withLock { $0.outcome }
    }

    /// Blocks the calling thread until the result is there.
    public func wait() -> Result<Value, any Error> {
        state.wait(until: { $0.outcome != nil }) { $0.outcome! }
    }

    /// Blocks for at most `timeout`; nil when the result did not come in time.
    public func wait(timeout: Duration) -> Result<Value, any Error>? {
        state.wait(until: { $0.outcome != nil }, timeout: timeout) { $0.outcome }
    }

    /// Suspends the task until the result is there.
    public var result: Result<Value, any Error> {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<Value, any Error>? in
                    if state.outcome == nil { state.waiters.append(continuation) }
                    return state.outcome
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

extension Completion where Value == Void {
    public func succeed() {
        complete(.success(()))
    }
}
