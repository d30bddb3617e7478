import Patience
import Runtime
import Testing

@Suite("Tests on test threads, off the cooperative pool", .onTestThreads)
struct TestThreadsTests {
    @Test("a synchronous test runs on a test thread, so blocking holds no thread of the pool")
    func synchronousBody() {
        #expect(BlockingThread.currentName == "test-thread")
    }

    @Test("an async test comes back to a test thread after it suspends, and so do its child tasks")
    func asyncBody() async throws {
        try await Task.sleep(for: .milliseconds(5))
        #expect(BlockingThread.currentName == "test-thread")
        let children = await withTaskGroup(of: String.self) { group in
            for _ in 0..<4 { group.addTask { BlockingThread.currentName } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(children == Array(repeating: "test-thread", count: 4))
    }

    @Test("more tests blocking at once than the pool has threads still all run together")
    func manyBlockingAtOnce() async {
        // Eight jobs that each block until all eight have started: on a pool of two threads
        // they never would.
        let started = Locked(0)
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    started.withLock { $0 += 1 }
                    return started.wait(until: { $0 >= 8 }, timeout: .seconds(30)) { $0 >= 8 }
                }
            }
            for await allStarted in group { #expect(allStarted) }
        }
    }
}
