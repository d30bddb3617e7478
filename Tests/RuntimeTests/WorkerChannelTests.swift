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
