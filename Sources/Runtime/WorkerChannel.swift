import Foundation

/// Hands items from a fixed number of worker threads to one thread that waits for them, and
/// stops everyone on the first failure: the batch job's parsing workers and its one store
/// writer (SQLite has one writer per file).
public final class WorkerChannel<Item>: @unchecked Sendable {
    // @unchecked: every stored property is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var items: [Item] = []
    private var workersLeft: Int
    private var failure: (any Error)?

    public init(workers: Int) { workersLeft = workers }

    public func send(_ item: Item) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    /// Every worker calls this once, at its end, with its failure if it failed.
    public func workerFinished(with error: (any Error)? = nil) {
        condition.lock()
        workersLeft -= 1
        if let error, failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// Whether a worker failed; the others stop taking new work when one has.
    public var hasFailed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return failure != nil
    }

    /// The next item, or nil once every worker has finished and every item was taken.
    /// Rethrows the first worker failure.
    public func receive() throws -> Item? {
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
