#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex.
///
/// `Synchronization.Mutex` would do, but it needs macOS 15 and the package still declares macOS 14.
final class Locked<State>: @unchecked Sendable {
    // Safe to share: every access to `state` happens between lock and unlock of `mutex`.
    private var state: State
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
