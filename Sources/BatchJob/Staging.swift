import Foundation

/// A scratch directory beside the stores for staged per-hour files, removed after the run.
struct StagingDirectory {
    let path: String

    init(parent: String) {
        path = (parent as NSString).appendingPathComponent("batch-staging-\(getpid())")
    }

    func create() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Calls `tick` periodically on a background thread until stopped.
final class ProgressTicker: @unchecked Sendable {
    // @unchecked: `stopped` is only touched under `lock`; `tick` is a Sendable closure.
    private let lock = NSCondition()
    private var stopped = false

    init(every interval: Duration, tick: @escaping @Sendable () -> Void) {
        let seconds = interval.seconds
        let thread = Thread { [self] in
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
