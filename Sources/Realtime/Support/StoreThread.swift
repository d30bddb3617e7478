import CounterStore
import Foundation

/// The realtime store on a thread of its own, so that a flush writes SQLite while the polling
/// thread goes on parsing and counting (on two cores the two overlap almost fully).
///
/// The store is opened, used and closed on that thread only (SQLite connections belong to one
/// thread at a time); other threads hand it jobs and get tickets back.
final class StoreThread: @unchecked Sendable {
    // Safe to share: `jobs` and `isStopping` are only touched while `condition` is held.
    private let condition = NSCondition()
    private var jobs: [(RealtimeStore) -> Void] = []
    private var isStopping = false
    private let stopped = Completion<Void>()

    /// Opens the store on a new thread; throws what opening threw.
    init(location: StoreLocation) throws {
        let opened = Completion<Void>()
        let thread = Thread { [self] in
            Thread.current.name = "rt-store"
            let store: RealtimeStore
            do {
                store = try RealtimeStore(location: location)
                opened.complete(.success(()))
            } catch {
                opened.complete(.failure(error))
                stopped.complete(.success(()))
                return
            }
            serve(store)
            stopped.complete(.success(()))
        }
        thread.start()
        try opened.wait().get()
    }

    /// Queues `job` and returns at once; the ticket completes when it has run.
    func start<Value: Sendable>(_ job: @escaping @Sendable (RealtimeStore) throws -> Value) -> Completion<Value> {
        let ticket = Completion<Value>()
        condition.withLock {
            if isStopping {
                ticket.complete(.failure(RealtimeError.stopped("the realtime store is closed")))
                return
            }
            jobs.append { store in ticket.complete(Result { try job(store) }) }
            condition.signal()
        }
        return ticket
    }

    /// Runs `job` and waits for its result.
    func run<Value: Sendable>(_ job: @escaping @Sendable (RealtimeStore) throws -> Value) throws -> Value {
        try start(job).wait().get()
    }

    /// Runs the jobs already queued, closes the store and ends the thread.
    func stop() {
        condition.withLock {
            isStopping = true
            condition.signal()
        }
        _ = stopped.wait()
    }

    private func serve(_ store: RealtimeStore) {
        while true {
            let next: ((RealtimeStore) -> Void)? = condition.withLock {
                while jobs.isEmpty && !isStopping { condition.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let next else { return }
            next(store)
        }
    }
}

/// A result that one thread waits for and another provides, once.
final class Completion<Value: Sendable>: @unchecked Sendable {
    // Safe to share: `result` is only touched while `condition` is held.
    private let condition = NSCondition()
    private var result: Result<Value, any Error>?

    func complete(_ outcome: Result<Value, any Error>) {
        condition.withLock {
            result = outcome
            condition.broadcast()
        }
    }

    /// The result if the job has run, without waiting.
    var finished: Result<Value, any Error>? {
        condition.withLock { result }
    }

    func wait() -> Result<Value, any Error> {
        condition.withLock {
            while result == nil { condition.wait() }
            return result!
        }
    }
}
