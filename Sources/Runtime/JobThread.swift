/// A thread of its own that owns a resource which must stay on one thread (a SQLite
/// connection) and runs the jobs other threads hand it, in order. Callers get a `Completion`
/// ticket back, so they can go on working while the job runs (the realtime consumer counts
/// while its previous flush is written).
public final class JobThread<Resource>: Sendable {
    private struct Queue {
        var jobs: [(Resource) -> Void] = []
        var isStopping = false
    }

    // The resource never leaves the thread that `init` starts; jobs reach it through `queue`.
    private let queue = Locked(Queue())
    private let name: String
    private let thread: Locked<BlockingThread?> = Locked(nil)

    /// Starts the thread, makes the resource there with `open` and returns once it is made;
    /// throws what `open` threw (the thread has ended then). `close` runs on the thread after
    /// the last job.
    public init(name: String, open: @escaping @Sendable () throws -> Resource,
                close: @escaping @Sendable (Resource) -> Void = { _ in }) throws {
        self.name = name
        let opened = Completion<Void>()
        let queue = self.queue
        thread.set(BlockingThread(name: name) {
            let resource: Resource
            do {
                resource = try open()
            } catch {
                opened.complete(.failure(error))
                return
            }
            opened.succeed()
            Self.serve(resource, queue: queue)
            close(resource)
        })
        try opened.wait().get()
    }

    /// Queues `job` and returns at once; the ticket completes when it has run. `then`, if
    /// given, runs right after the ticket completed (on the job's thread, or on the caller's
    /// when the thread has stopped): a way to wake a waiter that is not waiting on the ticket.
    public func start<Value: Sendable>(_ job: @escaping @Sendable (Resource) throws -> Value,
                                       then completed: (@Sendable () -> Void)? = nil) -> Completion<Value> {
        let ticket = Completion<Value>()
        let accepted = queue.withLock { queue in
            guard !queue.isStopping else { return false }
            queue.jobs.append { resource in
                ticket.complete(Result { try job(resource) })
                completed?()
            }
            return true
        }
        if !accepted {
            ticket.complete(.failure(RuntimeError.stopped("\(name) has stopped")))
            completed?()
        }
        return ticket
    }

    /// Runs `job` and waits for its result.
    public func run<Value: Sendable>(_ job: @escaping @Sendable (Resource) throws -> Value) throws -> Value {
        try start(job).wait().get()
    }

    /// Runs the jobs already queued, closes the resource and joins the thread. Safe to call
    /// more than once.
    public func stop() {
        queue.withLock { $0.isStopping = true }
        thread.value?.join()
    }

    private static func serve(_ resource: Resource, queue: Locked<Queue>) {
        while let next = queue.wait(until: { !$0.jobs.isEmpty || $0.isStopping }, then: { queue in
            queue.jobs.isEmpty ? nil : queue.jobs.removeFirst()
        }) {
            next(resource)
        }
    }
}

/// The one error type of the Runtime module.
public enum RuntimeError: Error, CustomStringConvertible, Sendable {
    /// Work handed to something that has already stopped.
    case stopped(String)
    /// The system refused a resource (a thread-local key).
    case unavailable(String)

    public var description: String {
        switch self {
        case .stopped(let message), .unavailable(let message): message
        }
    }
}
