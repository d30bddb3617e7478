import Foundation

/// A thread of its own that owns a resource which must stay on one thread (a SQLite
/// connection) and runs the jobs other threads hand it, in order. Callers get a `Completion`
/// ticket back, so they can go on working while the job runs (the realtime consumer counts
/// while its previous flush is written).
public final class JobThread<Resource>: @unchecked Sendable {
    // @unchecked: `jobs` and `isStopping` are only touched while `condition` is locked, and
    // the resource never leaves the thread that `init` starts.
    private let condition = NSCondition()
    private var jobs: [(Resource) -> Void] = []
    private var isStopping = false
    private let name: String
    private var thread: BlockingThread?

    /// Starts the thread, makes the resource there with `open` and returns once it is made;
    /// throws what `open` threw (the thread has ended then). `close` runs on the thread after
    /// the last job.
    public init(name: String, open: @escaping @Sendable () throws -> Resource,
                close: @escaping @Sendable (Resource) -> Void = { _ in }) throws {
        self.name = name
        let opened = Completion<Void>()
        thread = BlockingThread(name: name) { [self] in
            let resource: Resource
            do {
                resource = try open()
            } catch {
                opened.complete(.failure(error))
                return
            }
            opened.succeed()
            serve(resource)
            close(resource)
        }
        try opened.wait().get()
    }

    /// Queues `job` and returns at once; the ticket completes when it has run.
    public func start<Value: Sendable>(_ job: @escaping @Sendable (Resource) throws -> Value) -> Completion<Value> {
        let ticket = Completion<Value>()
        condition.lock()
        defer { condition.unlock() }
        if isStopping {
            ticket.complete(.failure(RuntimeError.stopped("\(name) has stopped")))
        } else {
            jobs.append { resource in ticket.complete(Result { try job(resource) }) }
            condition.signal()
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
        condition.lock()
        isStopping = true
        condition.signal()
        condition.unlock()
        thread?.join()
    }

    private func serve(_ resource: Resource) {
        while true {
            condition.lock()
            while jobs.isEmpty && !isStopping { condition.wait() }
            let next: ((Resource) -> Void)? = jobs.isEmpty ? nil : jobs.removeFirst()
            condition.unlock()
            guard let next else { return }
            next(resource)
        }
    }
}

/// The one error type of the Runtime module.
public enum RuntimeError: Error, CustomStringConvertible, Sendable {
    /// Work handed to something that has already stopped.
    case stopped(String)

    public var description: String {
        switch self {
        case .stopped(let message): message
        }
    }
}
