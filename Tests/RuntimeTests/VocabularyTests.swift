import Foundation
import Logging
import Patience
import Runtime
import Testing

@Suite("the runtime's shared vocabulary: waiting, backoff, clock, durations, thread names, health handles", .onTestThreads)
struct VocabularyTests {
    @Test("a thread waiting on a lock wakes when another thread's change makes its condition true")
    func waitWakesOnChange() {
        let queue = Locked<[Int]>([])
        let taken = Locked<[Int]>([])
        let consumer = BlockingThread(name: "test-waiter") {
            for _ in 0..<100 {
                let next = queue.wait(until: { !$0.isEmpty }) { $0.removeFirst() }
                taken.withLock { $0.append(next) }
            }
        }
        for item in 0..<100 { queue.withLock { $0.append(item) } }
        consumer.join()
        #expect(taken.value == Array(0..<100))
    }

    @Test("a timed wait returns when the condition holds, or after the timeout with the condition still false")
    func timedWait() {
        let flag = Locked(false)
        #expect(flag.wait(until: { $0 }, timeout: .milliseconds(20)) { $0 } == false)
        _ = BlockingThread(name: "test-setter") {
            usleep(5_000)
            flag.set(true)
        }
        #expect(flag.wait(until: { $0 }, timeout: .seconds(30)) { $0 } == true)
    }

    @Test("a lock held by another thread makes withLockIfAvailable return nil without running its body")
    func tryLock() {
        let state = Locked(0)
        let holding = Completion<Void>()
        let release = Completion<Void>()
        let holder = BlockingThread(name: "test-holder") {
            state.withLock { _ in
                holding.succeed()
                _ = release.wait()
            }
        }
        _ = holding.wait()
        #expect(state.withLockIfAvailable { $0 += 1 } == nil)
        release.succeed()
        holder.join()
        #expect(state.withLockIfAvailable { $0 += 1; return $0 } == 1)
    }

    @Test("a backoff doubles with each failure up to its maximum and starts over after a success")
    func backoffDoubles() {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(3))
        #expect((0..<5).map { _ in backoff.failed() } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3)])
        #expect(backoff.failures == 5)
        backoff.succeeded()
        #expect(backoff.failed() == .milliseconds(500))
    }

    @Test("the wall clock agrees with Foundation's to the millisecond")
    func wallClock() {
        let before = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let now = WallClock.system.epochMilliseconds()
        let after = Int64((Date().timeIntervalSince1970 * 1000).rounded(.up))
        #expect(before <= now && now <= after)
    }

    @Test("a duration in seconds keeps its fraction")
    func durationSeconds() {
        #expect(Duration.milliseconds(1_500).seconds == 1.5)
        #expect(Duration.seconds(-2).seconds == -2)
        #expect(Duration.microseconds(1).seconds == 1e-6)
    }

    @Test("a thread carries its name as the kernel shows it, cut to the 15 bytes Linux keeps")
    func threadNames() async throws {
        let short = try await BlockingThread.run(name: "rt-store") { BlockingThread.currentName }
        #expect(short == "rt-store")
        let long = try await BlockingThread.run(name: "archive-gzip-and-more") { BlockingThread.currentName }
        #expect(long == "archive-gzip-an")
    }

    @Test("a component's health handle reports under its name, and reads back its last state")
    func healthHandle() {
        let board = ComponentHealth(logger: Logger(label: "test"))
        let consumer = board.handle(for: "consumer")
        #expect(consumer.state == nil)
        consumer.update(.running)
        board.handle(for: "reader").update(.degraded(reason: "disk full"))
        #expect(consumer.state == .running)
        #expect(board.reports().map(\.name) == ["consumer", "reader"])
        #expect(!board.allRunning)
    }
}

@Suite("Log throttle", .onTestThreads)
struct LogThrottleTests {
    @Test("one line per interval gets through, and the next one that does says how many were held back")
    func oncePerInterval() {
        let throttle = LogThrottle(every: .seconds(10))
        let start = ContinuousClock.now
        #expect(throttle.admit(now: start) == 0)
        #expect(throttle.admit(now: start + .seconds(1)) == nil)
        #expect(throttle.admit(now: start + .seconds(9)) == nil)
        #expect(throttle.admit(now: start + .seconds(10)) == 2)
        #expect(throttle.admit(now: start + .seconds(11)) == nil)
        #expect(throttle.admit(now: start + .seconds(60)) == 1)
    }
}
