import Foundation

/// Calls `tick` periodically on a background thread until stopped.
final class ProgressTicker: @unchecked Sendable {
    // @unchecked: `stopped` is only touched under `lock`; `tick` is a Sendable closure.
    private let lock = NSCondition()
    private var stopped = false

    init(every interval: Duration, tick: @escaping @Sendable () -> Void) {
        let seconds = interval.seconds
        let thread = Thread { [self] in
            Thread.current.name = "batch-progress"
            lock.lock()
            while !stopped {
                _ = lock.wait(until: Date(timeIntervalSinceNow: seconds))
                if stopped { break }
                lock.unlock()
                tick()
                lock.lock()
            }
            lock.unlock()
        }
        thread.start()
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.broadcast()
        lock.unlock()
    }
}
