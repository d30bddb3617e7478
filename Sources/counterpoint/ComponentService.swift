import Foundation
import Logging
import ServiceLifecycle

/// Adapts one of Counterpoint's thread-based components (consumer, archiver, reader, demo
/// traffic, …) to swift-service-lifecycle: started when the group runs, stopped on graceful
/// shutdown (SIGINT/SIGTERM) — in reverse order of the group's list — and ending the group
/// with its error if the component fails on its own.
struct ComponentService: Service, CustomStringConvertible {
    let description: String
    let start: @Sendable () throws -> Void
    let stop: @Sendable () throws -> Void
    /// The component's own failure, if it ended by itself.
    let failure: @Sendable () -> (any Error)?

    init(_ name: String, start: @escaping @Sendable () throws -> Void, stop: @escaping @Sendable () throws -> Void,
         failure: @escaping @Sendable () -> (any Error)? = { nil }) {
        self.description = name
        self.start = start
        self.stop = stop
        self.failure = failure
    }

    func run() async throws {
        try start()
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if let failure = failure() {
                try? stop()
                throw CommandFailure("\(description) failed: \(failure)")
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        try stop()
    }
}

/// Runs `body` every `interval` on a background thread until stopped (the scheduled batch).
final class PeriodicTask: @unchecked Sendable {
    // @unchecked: `stopped` is only touched while `condition` is locked.
    private let condition = NSCondition()
    private var stopped = false
    private let interval: Duration
    private let body: @Sendable () -> Void
    private var thread: Thread?

    init(every interval: Duration, _ body: @escaping @Sendable () -> Void) {
        self.interval = interval
        self.body = body
    }

    func start() {
        let thread = Thread { [self] in
            Thread.current.name = "periodic-task"
            let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
            condition.lock()
            while !stopped {
                condition.unlock()
                body()
                condition.lock()
                if stopped { break }
                _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
            }
            condition.unlock()
        }
        self.thread = thread
        thread.start()
    }

    /// Stops after the current run of `body`, if one is under way, without waiting for it.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
