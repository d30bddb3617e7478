import Foundation
import Generator
import Kafka
import Logging

/// Live synthetic plays for `run --demo`: valid events occurring now, produced at a steady
/// rate into a topic on its own thread until `stop`.
public final class DemoTraffic: Sendable {
    private enum State {
        case idle
        case running(Replayer, finished: DispatchSemaphore, outcome: Outcome)
        case stopped
    }

    /// Filled in by the replay thread before it signals `finished`.
    private final class Outcome: @unchecked Sendable {
        // Safe to share: written once by the replay thread before it signals the semaphore
        // that the only reader waits on.
        var result: Result<ReplaySummary, ReplayError>?
    }

    private let producer: KafkaProducer
    private let configuration: ReplayConfiguration
    private let generator: GeneratorConfiguration
    private let state = Protected(State.idle)
    private let logger: Logger

    /// A few thousand tracks with the usual popularity skew, so a dashboard shows a clear top list.
    public static var defaultGenerator: GeneratorConfiguration {
        var configuration = GeneratorConfiguration()
        configuration.tracks = 5_000
        configuration.seed = UInt64(UInt32(truncatingIfNeeded: WallClock.nowMilliseconds()))
        return configuration
    }

    /// `rate` events per second (0 for as fast as possible) into `topic` through `producer`,
    /// which may be shared: the traffic only adds messages to it.
    public init(producer: KafkaProducer, topic: String = "plays", rate: Double,
                generator: GeneratorConfiguration = DemoTraffic.defaultGenerator, logger: Logger) {
        var configuration = ReplayConfiguration(topic: topic)
        configuration.rate = rate
        configuration.flushTimeout = .seconds(5)
        self.producer = producer
        self.configuration = configuration
        self.generator = generator
        self.logger = logger
    }

    /// Starts producing on a thread of its own; once only.
    public func start() {
        let replayer = Replayer(source: .synthetic(generator), producer: producer, configuration: configuration, logger: logger)
        let finished = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let started = state.withLock { state -> Bool in
            guard case .idle = state else { return false }
            state = .running(replayer, finished: finished, outcome: outcome)
            return true
        }
        guard started else { return }
        let logger = self.logger
        let thread = Thread {
            Thread.current.name = "demo-traffic"
            outcome.result = Result { () throws(ReplayError) in try replayer.run() }
            if case .failure(let error) = outcome.result {
                logger.error("demo traffic stopped", metadata: ["replay.error": "\(error)"])
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops producing, waits for the thread (and its flush of up to 5 s) and returns what was
    /// sent; nil when never started or already stopped, or when producing failed (logged).
    @discardableResult
    public func stop() -> ReplaySummary? {
        let running = state.withLock { state -> (Replayer, DispatchSemaphore, Outcome)? in
            guard case let .running(replayer, finished, outcome) = state else { return nil }
            state = .stopped
            return (replayer, finished, outcome)
        }
        guard let (replayer, finished, outcome) = running else { return nil }
        replayer.stop()
        finished.wait()
        return try? outcome.result?.get()
    }
}
