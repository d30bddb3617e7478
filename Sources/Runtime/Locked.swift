import Synchronization

/// A value shared between threads, guarded by a `Synchronization.Mutex`.
///
/// `Mutex` itself cannot be copied, so it cannot be handed from the object that creates the
/// state to the threads that use it; this class is that handle. It is the one lock of the code
/// base: every module keeps its shared state in a `Locked` or a `Mutex`.
///
/// Unlike `Mutex`, it also holds state that is not `Sendable` (a consumer's session object, a
/// librdkafka topic handle): such state never leaves the lock except through `body`, which runs
/// while the lock is held, so only one thread touches it at a time.
public final class Locked<State>: Sendable {
    private let mutex: Mutex<Unchecked<State>>

    public init(_ initial: State) {
        mutex = Mutex(Unchecked(value: initial))
    }

    /// Runs `body` with the state while no other thread can touch it. Keep `body` short and
    /// free of blocking calls: return what to do, and do it after the lock is released.
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        let outcome = mutex.withLock { box in
            Unchecked(value: Swift.Result { () throws(Failure) -> Result in try body(&box.value) })
        }
        return try outcome.value.get()
    }

    /// Like `withLock`, but returns nil at once, without running `body`, when another thread
    /// holds the lock.
    public func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        let outcome = mutex.withLockIfAvailable { box in
            Unchecked(value: Swift.Result { () throws(Failure) -> Result in try body(&box.value) })
        }
        return try outcome?.value.get()
    }
}

extension Locked where State: Sendable {
    /// The current state (a copy).
    public var value: State {
        withLock { $0 }
    }

    public func set(_ newValue: State) {
        withLock { $0 = newValue }
    }
}

/// Carries a value across the `sending` boundary of `Mutex.withLock`.
private struct Unchecked<Value>: @unchecked Sendable {
    // @unchecked: only `Locked` uses it, and only while its mutex is held.
    var value: Value
}
