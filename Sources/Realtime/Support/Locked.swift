import Foundation

/// A value guarded by a lock, for state that the consumer thread writes and `status()` reads.
final class Locked<State>: @unchecked Sendable {
    // Safe to share: every access to `state` happens while `lock` is held.
    private let lock = NSLock()
    private var state: State

    init(_ initial: State) { state = initial }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
