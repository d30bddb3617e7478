import Foundation
import Synchronization

/// Hands finished hours from the parsing workers to the one thread that writes the batch
/// store (SQLite has one writer per file), and stops everyone on the first error.
final class ResultChannel<Item>: @unchecked Sendable {
    // @unchecked: every stored property is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var items: [Item] = []
    private var workersLeft: Int
    private var failure: (any Error)?

    init(workers: Int) { workersLeft = workers }

    func send(_ item: Item) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    func workerFinished(with error: (any Error)? = nil) {
        condition.lock()
        workersLeft -= 1
        if let error, failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// Whether a worker failed; the others stop taking new work when one has.
    var hasFailed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return failure != nil
    }

    /// The next item, or `nil` once every worker has finished and all items were taken.
    /// Rethrows the first worker error.
    func receive() throws -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let failure { throw failure }
            if !items.isEmpty { return items.removeFirst() }
            if workersLeft == 0 { return nil }
            condition.wait()
        }
    }
}

/// A counter shared by threads: the next work unit to take, or bytes read for progress.
final class SharedCounter: Sendable {
    private let value = Mutex<Int64>(0)

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
