import Runtime

/// Calls `tick` every `interval` on a thread of its own until `stop()`, which joins it: no
/// tick runs after `stop()` returns.
final class ProgressTicker: Sendable {
    private let thread: PeriodicThread

    init(every interval: Duration, tick: @escaping @Sendable () -> Void) {
        thread = PeriodicThread(name: "batch-progress", every: interval, tick)
    }

    func stop() {
        thread.stop()
    }
}
