/// Blocking work as a component: `work` runs once on a thread of its own and is handed the
/// `StopSignal` that `stop()` raises, so that it returns early (it checks the signal, sleeps on
/// it, or registers how to wake what it blocks in). Starts once; a stop before `start` prevents
/// the start. What `work` returns is in `outcome`.
public final class BlockingJob<Value: Sendable>: BlockingComponent {
    public let outcome = Completion<Value>()
    public let ended = Completion<Void>()
    /// Raised by `stop()`.
    public let stopSignal = StopSignal()
    private let name: String
    private let stackSize: Int?
    private let work: @Sendable (StopSignal) throws -> Value
    private let thread = Locked<BlockingThread?>(nil)

    /// `stackSize` in bytes, nil for the default (see `BlockingThread`).
    public init(name: String, stackSize: Int? = nil, work: @escaping @Sendable (StopSignal) throws -> Value) {
        self.name = name
        self.stackSize = stackSize
        self.work = work
    }

    /// Starts `work` on its thread and returns. A job runs once: a second start, or a start
    /// after `stop`, changes nothing.
    public func start() {
        let (outcome, ended, work, stopSignal) = (self.outcome, self.ended, self.work, self.stopSignal)
        thread.withLock { thread in
            guard thread == nil, ended.finished == nil else { return }
            thread = BlockingThread(name: name, stackSize: stackSize) {
                let result = Result { try work(stopSignal) }
                outcome.complete(result)
                ended.complete(result.map { _ in () })
            }
        }
    }

    /// Whether `start` has started `work` (which may have returned since).
    public var hasStarted: Bool { thread.value != nil }

    /// Raises the stop signal, waits for `work` to return and rethrows its failure. Every call
    /// waits for the same end and reports the same outcome.
    public func stop() throws {
        stopSignal.request()
        let started = thread.withLock { thread in
            if thread == nil { ended.succeed() }
            return thread
        }
        started?.join()
        try ended.wait().get()
    }
}

/// A component whose work is one `BlockingJob` (a consumer's loop): it starts, stops and ends
/// as its job does.
public protocol JobComponent: BlockingComponent {
    var job: BlockingJob<Void> { get }
}

extension JobComponent {
    public var ended: Completion<Void> { job.ended }

    public func start() throws {
        job.start()
    }

    public func stop() throws {
        try job.stop()
    }
}
