import Runtime

/// What a probe answered, taken every `interval` on a thread of its own: for a state that lasts
/// only seconds (a cluster briefly down), which a task waiting on the cooperative pool may not
/// run at all while it holds (see Eventually.swift). The thread stops with `stop()` or when the
/// sampler goes away.
public final class Sampler<Sample: Sendable>: Sendable {
    private let samples = Locked<[Sample]>([])
    private let thread: PeriodicThread

    /// Starts sampling; `probe` returns nil for "nothing worth keeping" (no answer, say).
    public init(every interval: Duration = .milliseconds(100), _ probe: @escaping @Sendable () -> Sample?) {
        let samples = self.samples
        thread = PeriodicThread(name: "sampler", every: interval) {
            guard let sample = probe() else { return }
            samples.withLock { $0.append(sample) }
        }
    }

    /// Every sample so far, oldest first.
    public var seen: [Sample] { samples.withLock { $0 } }

    /// The first sample so far that satisfies `predicate`.
    public func first(where predicate: (Sample) -> Bool) -> Sample? { samples.withLock { $0.first(where: predicate) } }

    public func stop() { thread.stop() }

    deinit { thread.stop() }
}
