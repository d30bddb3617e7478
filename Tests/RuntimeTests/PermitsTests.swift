import Patience
import Runtime
import Testing

@Suite("permits", .onTestThreads)
struct PermitsTests {
    struct Broken: Error {}

    @Test("at most `capacity` bodies hold a permit at once; one more is refused at once, not made to wait")
    func boundedWithoutWaiting() {
        let permits = Permits(capacity: 2)
        let outcome = permits.withPermit { () -> [Bool] in
            permits.withPermit { () -> [Bool] in
                let third = permits.withPermit { true }
                return [true, true, third ?? false]
            } ?? []
        }
        #expect(outcome == [true, true, false])
        #expect(permits.withPermit { 1 } == 1, "every permit came back")
    }

    @Test("a body that throws gives its permit back")
    func throwingBodyReleases() {
        let permits = Permits(capacity: 1)
        #expect(throws: Broken.self) { try permits.withPermit { throw Broken() } }
        #expect(permits.withPermit { "again" } == "again")
    }

    @Test("threads racing for permits never hold more than the capacity")
    func racingThreads() throws {
        let permits = Permits(capacity: 3)
        let holders = Locked((now: 0, most: 0, granted: 0))
        let finished = WorkerChannel<Int>(workers: 8)
        for _ in 0..<8 {
            _ = BlockingThread(name: "permit-racer") {
                for _ in 0..<2_000 {
                    _ = permits.withPermit {
                        holders.withLock { $0.now += 1; $0.most = max($0.most, $0.now); $0.granted += 1 }
                        holders.withLock { $0.now -= 1 }
                    }
                }
                finished.workerFinished()
            }
        }
        while try finished.receive() != nil {}
        let state = holders.value
        #expect(state.most <= 3)
        #expect(state.granted > 0)
        #expect(state.now == 0)
    }
}
