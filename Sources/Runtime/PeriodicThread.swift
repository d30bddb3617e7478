/// Runs `body` every `interval` on a thread of its own until `stop()`, which wakes the thread
/// at once, waits for a run under way to finish and joins the thread: after `stop()` returns
/// the body never runs again. The first run comes one interval after creation. The one
/// periodic loop of the code base.
public final class PeriodicThread: Sendable {
    private let stopSignal = StopSignal()
    private let thread: BlockingThread

    public init(name: String, every interval: Duration, _ body: @escaping @Sendable () -> Void) {
        let stopSignal = self.stopSignal
        thread = BlockingThread(name: name) {
            while !stopSignal.sleep(for: interval) {
                body()
            }
        }
    }

    /// Stops the loop and joins its thread. Safe to call more than once, from any thread but
    /// the loop's own.
    public func stop() {
        stopSignal.request()
        thread.join()
    }
}
