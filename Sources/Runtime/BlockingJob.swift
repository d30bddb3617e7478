/// A blocking job as a component: `work` runs once on a thread of its own, and `requestStop`
/// makes it return early (it must be safe to call from any thread, before or after `work`).
/// What `work` returns is in `outcome`.
public final class BlockingJob<Value: Sendable>: BlockingComponent {
    public let outcome = Completion<Value>()
    public let ended = Completion<Void>()
    private let name: String
    private let work: @Sendable () throws -> Value
    private let requestStop: @Sendable () -> Void
    private let thread = Locked<BlockingThread?>(nil)

    public init(name: String, work: @escaping @Sendable () throws -> Value, requestStop: @escaping @Sendable () -> Void) {
        self.name = name
        self.work = work
        self.requestStop = requestStop
    }

    public func start() throws {
        let (outcome, ended, work) = (self.outcome, self.ended, self.work)
        thread.withLock { thread in
            guard thread == nil, ended.finished == nil else { return }
            thread = BlockingThread(name: name) {
                let result = Result { try work() }
                outcome.complete(result)
                ended.complete(result.map { _ in () })
            }
        }
    }

    public func stop() throws {
        requestStop()
        let started = thread.withLock { thread in
            if thread == nil { ended.succeed() }
            return thread
        }
        started?.join()
        try ended.wait().get()
    }
}
