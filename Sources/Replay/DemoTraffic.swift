import Generator
import Kafka
import Logging
import Runtime

/// Live synthetic plays for `run --demo`: valid events occurring now, produced at a steady
/// rate into a topic on its own thread until `stop`.
public final class DemoTraffic: BlockingComponent {
    private let producer: KafkaProducer
    private let configuration: ReplayConfiguration
    private let generator: GeneratorConfiguration
    private let logger: Logger
    private let job: BlockingJob<ReplaySummary>
    private let replayer: Replayer

    /// Completes when producing has ended: stopped, or failed.
    public var ended: Completion<Void> { job.ended }

    /// A few thousand tracks with the usual popularity skew, so a dashboard shows a clear top
    /// list, and the other signals beside the plays at their realistic rates.
    public static var defaultGenerator: GeneratorConfiguration {
        var configuration = GeneratorConfiguration()
        configuration.tracks = 5_000
        configuration.signalShare = SignalMix.realisticShare  // every signal (SPEC §11)
        configuration.seed = UInt64(UInt32(truncatingIfNeeded: WallClock.system.epochMilliseconds()))  // a different demo each run
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
        let replayer = Replayer(source: .synthetic(generator), producer: producer, configuration: configuration, logger: logger)
        self.replayer = replayer
        job = BlockingJob(name: "demo-traffic") { stop in
            do {
                return try replayer.run(until: stop)
            } catch {
                logger.error("demo traffic stopped", metadata: ["replay.error": "\(error)"])
                throw error
            }
        }
    }

    /// Starts producing on a thread of its own; a second start changes nothing.
    public func start() throws {
        job.start()
    }

    /// Stops producing, waits for the thread (and its flush of up to 5 s); rethrows the
    /// failure that ended producing, if one did.
    public func stop() throws {
        try job.stop()
    }

    /// What was sent, once stopped; nil before, or when producing failed.
    public var summary: ReplaySummary? {
        try? job.outcome.finished?.get()
    }
}
