#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value shared between threads: the one lock of the code base.
///
/// Every module keeps its shared state in a `Locked`, and every thread that must sleep until
/// another changes that state waits on the same `Locked` (`wait(until:then:)`): a waiter
/// re-checks its condition after every `withLock`, so no one signals by hand and no wake-up
/// is lost. With no waiter, a `withLock` costs one uncontended pthread mutex lock and unlock.
///
/// It also holds state that is not `Sendable` (a consumer's session object, a librdkafka topic
/// handle): such state never leaves the lock except through `body`, which runs while the lock
/// is held, so only one thread touches it at a time. Keep `body` short and free of blocking
/// calls: return what to do, and do it after the lock is released.
public final class Locked<State>: @unchecked Sendable {
    // @unchecked: `state` and `waiters` are only read and written while `mutex` is held.
    // `@usableFromInline` so that `withLock`, on every hot path of the code base, is specialized
    // in the caller's module: an unspecialized call instantiates the generic metadata of its
    // result (a tuple, an optional) at run time on every call.
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    @usableFromInline var state: State
    /// Threads inside `wait`: only then does a change broadcast.
    private var waiters = 0

    public init(_ initial: State) {
        state = initial
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        // Deadlines are measured on the monotonic clock: a wall-clock step never stretches a wait.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the state while no other thread can touch it, then lets the threads
    /// waiting on this lock re-check their conditions.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { unlockAfterChange() }
        return try body(&state)
    }

    /// Like `withLock`, but returns nil at once, without running `body`, when another thread
    /// holds the lock.
    @inlinable
    public func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { unlockAfterChange() }
        return try body(&state)
    }

    /// Sleeps until `isReady` holds for the state (checked at once, then after every change by
    /// another thread), then runs `body` with the lock still held.
    public func wait<Result, Failure: Error>(
        until isReady: (State) -> Bool, then body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { unlockAfterChange() }
        if !isReady(state) {
            waiters += 1
            repeat { pthread_cond_wait(condition, mutex) } while !isReady(state)
            waiters -= 1
        }
        return try body(&state)
    }

    /// Like `wait(until:then:)`, but gives up after `timeout`: then `body` runs all the same,
    /// with `isReady` still false for the state it sees.
    public func wait<Result, Failure: Error>(
        until isReady: (State) -> Bool, timeout: Duration, then body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let deadline = Self.deadline(after: timeout)
        pthread_mutex_lock(mutex)
        defer { unlockAfterChange() }
        if !isReady(state) {
            waiters += 1
            withUnsafePointer(to: deadline) { deadline in
                while !isReady(state), pthread_cond_timedwait(condition, mutex, deadline) != ETIMEDOUT {}
            }
            waiters -= 1
        }
        return try body(&state)
    }

    @usableFromInline
    func unlockAfterChange() {
        if waiters > 0 { pthread_cond_broadcast(condition) }
        pthread_mutex_unlock(mutex)
    }

    /// The absolute time `timeout` from now, on the clock the condition measures.
    private static func deadline(after timeout: Duration) -> timespec {
        var now = timespec()
        #if canImport(Glibc)
        clock_gettime(CLOCK_MONOTONIC, &now)
        #else
        clock_gettime(CLOCK_REALTIME, &now)
        #endif
        let (seconds, attoseconds) = max(.zero, timeout).components
        let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        return timespec(tv_sec: now.tv_sec + Int(clamping: seconds) + nanoseconds / 1_000_000_000,
                        tv_nsec: nanoseconds % 1_000_000_000)
    }
}

extension Locked where State: Sendable {
    /// The current state (a copy).
    @inlinable
    public var value: State {
        withLock { $0 }
    }

    @inlinable
    public func set(_ newValue: State) {
        withLock { $0 = newValue }
    }
}
