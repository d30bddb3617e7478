import Patience
import Runtime
import Testing

@Suite("worker channels", .onTestThreads)
struct WorkerChannelTests {
    struct Broken: Error {}

    @Test("a worker channel delivers every item of every worker, then nil once all have finished")
    func deliversEverything() throws {
        let channel = WorkerChannel<Int>(workers: 4)
        for worker in 0..<4 {
            _ = BlockingThread(name: "test-worker") {
                for item in 0..<250 { channel.send(worker * 1_000 + item) }
                channel.workerFinished()
            }
        }
        var received: [Int] = []
        while let item = try channel.receive() { received.append(item) }
        #expect(received.sorted() == (0..<4).flatMap { worker in (0..<250).map { worker * 1_000 + $0 } })
    }

    @Test("a worker waits while the channel holds its capacity, and goes on once the receiver takes an item")
    func boundedByCapacity() throws {
        let channel = WorkerChannel<Int>(workers: 1, capacity: 2)
        let sent = Locked(0)
        _ = BlockingThread(name: "test-worker") {
            for item in 0..<3 {
                channel.send(item)
                sent.withLock { $0 += 1 }
            }
            channel.workerFinished()
        }
        #expect(sent.wait(until: { $0 == 2 }, timeout: .seconds(10)) { $0 } == 2)
        BlockingThread.sleep(for: .milliseconds(200))
        #expect(sent.withLock { $0 } == 2)
        var received: [Int] = []
        while let item = try channel.receive() { received.append(item) }
        #expect(received == [0, 1, 2])
    }

    @Test("the first worker failure reaches the receiver and tells the other workers to stop")
    func firstFailureWins() throws {
        let channel = WorkerChannel<Int>(workers: 2)
        channel.send(1)
        channel.workerFinished(with: Broken())
        #expect(channel.hasFailed)
        #expect(throws: Broken.self) { try channel.receive() }
        channel.workerFinished()
        #expect(throws: Broken.self) { try channel.receive() }
    }
}
