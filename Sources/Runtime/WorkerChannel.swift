/// Hands items from a fixed number of worker threads to one thread that waits for them, and
/// stops everyone on the first failure: the batch job's parsing workers and its one store
/// writer (SQLite has one writer per file).
public final class WorkerChannel<Item>: Sendable {
    private struct State {
        var items: [Item] = []
        var workersLeft: Int
        var failure: (any Error)?
    }

    // Items pass from one thread to another only through the lock.
    private let state: Locked<State>

    public init(workers: Int) { state = Locked(State(workersLeft: workers)) }

    public func send(_ item: Item) {
        state.withLock { $0.items.append(item) }
    }

    /// Every worker calls this once, at its end, with its failure if it failed.
    public func workerFinished(with error: (any Error)? = nil) {
        state.withLock { state in
            state.workersLeft -= 1
            if let error, state.failure == nil { state.failure = error }
        }
    }

    /// Whether a worker failed; the others stop taking new work when one has.
    public var hasFailed: Bool {
        state.withLock { $0.failure != nil }
    }

    /// The next item, or nil once every worker has finished and every item was taken.
    /// Rethrows the first worker failure.
    public func receive() throws -> Item? {
        try state.wait(until: { $0.failure != nil || !$0.items.isEmpty || $0.workersLeft == 0 }) { state throws -> Item? in
            if let failure = state.failure { throw failure }
            return state.items.isEmpty ? nil : state.items.removeFirst()
        }
    }
}
