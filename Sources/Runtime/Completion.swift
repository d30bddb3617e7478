import Foundation

/// A result that one thread provides once and that others wait for: blocking threads with
/// `wait()`, async code with `await result` — which suspends without polling and without
/// holding a thread of Swift's cooperative pool.
///
/// With `JobThread` and `WorkerChannel`, the only places where a thread sleeps until another
/// wakes it: the rest of the code base waits through these types (`PeriodicThread` and
/// `BlockingThread` build on this one), never on a condition or semaphore of its own.
public final class Completion<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `outcome` and `waiters` are only touched while `condition` is locked.
    private let condition = NSCondition()
    private var outcome: Result<Value, any Error>?
    private var waiters: [CheckedContinuation<Result<Value, any Error>, Never>] = []

    public init() {}

    /// Provides the result and wakes every waiter. Only the first call counts; returns
    /// whether it was this one.
    @discardableResult
    public func complete(_ result: Result<Value, any Error>) -> Bool {
        condition.lock()
        guard outcome == nil else {
            condition.unlock()
            return false
        }
        outcome = result
        let resumed = waiters
        waiters = []
        condition.broadcast()
        condition.unlock()
        for waiter in resumed { waiter.resume(returning: result) }
        return true
    }

    /// The result if there is one already, without waiting.
    public var finished: Result<Value, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        return outcome
    }

    /// Blocks the calling thread until the result is there.
    public func wait() -> Result<Value, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil { condition.wait() }
        return outcome!
    }

    /// Blocks for at most `timeout`; nil when the result did not come in time.
    public func wait(timeout: Duration) -> Result<Value, any Error>? {
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil {
            if !condition.wait(until: deadline) { break }
        }
        return outcome
    }

    /// Suspends the task until the result is there.
    public var result: Result<Value, any Error> {
        get async {
            await withCheckedContinuation { continuation in
                condition.lock()
                if let outcome {
                    condition.unlock()
                    continuation.resume(returning: outcome)
                } else {
                    waiters.append(continuation)
                    condition.unlock()
                }
            }
        }
    }
}

extension Completion where Value == Void {
    public func succeed() {
        complete(.success(()))
    }
}

extension Duration {
    /// The duration in seconds, as Foundation's time intervals count them.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
