import Runtime
import Testing

/// Runs every test of a suite on threads of its own instead of Swift's cooperative pool.
///
/// The pool has one thread per core: two on the machines the tests run on. A synchronous test
/// (a batch run, a PostgreSQL round trip, a replay to its end) holds one of them for as long as
/// it blocks, and two such tests stop every async test in the process — its waits, its child
/// processes' checks — until one of them returns (see Eventually.swift). A test under
/// `.onTestThreads` prefers `TestThreads.shared` as its task executor (SE-0417): its body, sync
/// or async, and the child tasks it makes run there, so a test that blocks holds only its own
/// thread. Swift Testing still decides how many tests run at once.
public struct OnTestThreads: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(TestThreads.shared) {
            try await function()
        }
    }
}

extension Trait where Self == OnTestThreads {
    /// The suite's tests run on `TestThreads`, not on the cooperative pool.
    public static var onTestThreads: Self { OnTestThreads() }
}

/// A task executor that runs each job on an idle thread of its own, starting a thread when none
/// is idle (up to `maximumThreads`; beyond that jobs wait for one). Threads are kept once
/// started: a test process needs about as many as tests that block at once.
public final class TestThreads: TaskExecutor {
    public static let shared = TestThreads()

    /// Jobs beyond this many threads busy at once wait their turn.
    public static let maximumThreads = 64

    private struct State {
        var jobs: [UnownedJob] = []
        var threads = 0
        var idle = 0
    }

    private let state = Locked(State())

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let startsThread = state.withLock { state in
            state.jobs.append(job)
            guard state.jobs.count > state.idle, state.threads < Self.maximumThreads else { return false }
            state.threads += 1
            return true
        }
        if startsThread {
            _ = BlockingThread(name: "test-thread") { [self] in serve() }
        }
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// A thread's life: take the oldest job, run it, and wait for the next.
    private func serve() {
        let executor = asUnownedTaskExecutor()
        while true {
            let next = state.withLock { state -> UnownedJob? in
                guard state.jobs.isEmpty else { return state.jobs.removeFirst() }
                state.idle += 1
                return nil
            }
            let job = next ?? state.wait(until: { !$0.jobs.isEmpty }) { state in
                state.idle -= 1
                return state.jobs.removeFirst()
            }
            job.runSynchronously(on: executor)
        }
    }
}
