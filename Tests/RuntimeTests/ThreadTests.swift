import Foundation
import Patience
import Runtime
import Testing

@Suite("threads, locks and completions", .onTestThreads)
struct ThreadTests {
    @Test("a periodic thread runs its body repeatedly, and never again once stop() has returned")
    func periodicStopJoins() async throws {
        let runs = Locked(0)
        let thread = PeriodicThread(name: "test-periodic", every: .milliseconds(5)) {
            runs.withLock { $0 += 1 }
            usleep(2_000)  // a run under way when stop() comes is waited for
        }
        while runs.value < 3 { try await Task.sleep(for: .milliseconds(5)) }
        thread.stop()
        let atStop = runs.value
        try await Task.sleep(for: .milliseconds(50))
        #expect(runs.value == atStop, "no run after stop() returned")
        thread.stop()  // a second stop is harmless
    }

    @Test("a blocking thread's join waits for its body, and async code awaits it without a thread")
    func blockingThreadJoins() async throws {
        let finished = Locked(false)
        let thread = BlockingThread(name: "test-blocking") {
            usleep(20_000)
            finished.set(true)
        }
        await thread.joined()
        #expect(finished.value)
        thread.join()
        let value = try await BlockingThread.run(name: "test-run") { 6 * 7 }
        #expect(value == 42)
    }

    @Test("a completion keeps its first result and hands it to blocking and async waiters alike")
    func completionFirstResultWins() async throws {
        let completion = Completion<Int>()
        #expect(completion.finished == nil)
        #expect(completion.wait(timeout: .milliseconds(10)) == nil)
        async let awaited = completion.result
        _ = BlockingThread(name: "test-complete") {
            usleep(10_000)
            completion.complete(.success(1))
            completion.complete(.success(2))
        }
        #expect(try await awaited.get() == 1)
        #expect(try completion.wait().get() == 1)
    }

    @Test("a job thread runs jobs in order on its own thread and refuses them once stopped")
    func jobThreadOrder() throws {
        let jobs = try JobThread<Locked<[Int]>>(name: "test-jobs", open: { Locked([]) })
        let tickets = (0..<100).map { index in jobs.start { log in log.withLock { $0.append(index) } } }
        for ticket in tickets { try ticket.wait().get() }
        #expect(try jobs.run { $0.value } == Array(0..<100))
        jobs.stop()
        #expect(throws: RuntimeError.self) { try jobs.run { _ in 0 } }
    }

    @Test("a lock keeps concurrent increments exact")
    func lockedCounts() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1_000 { counter.withLock { $0 += 1 } } }
            }
        }
        #expect(counter.value == 8_000)
    }
}
