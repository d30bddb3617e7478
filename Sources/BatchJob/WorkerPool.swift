import Runtime

/// Hands finished hours from the parsing workers to the one thread that writes the batch
/// store, and stops everyone on the first error.
typealias ResultChannel = WorkerChannel

/// A counter shared by threads: the next work unit to take, or bytes read for progress.
final class SharedCounter: Sendable {
    private let value = Locked<Int64>(0)

    /// Adds `amount` and returns the value before the addition.
    @discardableResult
    func add(_ amount: Int64) -> Int64 {
        value.withLock { value in
            defer { value += amount }
            return value
        }
    }

    var current: Int64 {
        value.withLock { $0 }
    }
}
