import Kafka
import Logging
import Replay
import Runtime

/// `counterpoint replay`: the events of `source` produced to `configuration.topic`, as one job.
///
/// The producer is made here (off the cooperative pool: reaching the broker blocks), so a broker
/// that cannot be reached fails the build with its `KafkaError`. The job ends by itself at the
/// source's end, `configuration.duration` or `configuration.limit`, which ends the application;
/// stopping the application earlier (SIGINT/SIGTERM) ends it after a final, shorter flush.
/// - Parameter progress: called now and then while events are produced.
public func buildReplay(source: ReplaySource, producer producerConfiguration: KafkaProducerConfiguration,
                        configuration: ReplayConfiguration, logger: Logger,
                        progress: (@Sendable (ReplayProgress) -> Void)? = nil) async throws -> ReplayRun {
    let producer = try await BlockingThread.run(name: "connect") {
        try KafkaProducer(configuration: producerConfiguration, logger: logger)
    }
    let replayer = Replayer(source: source, producer: producer, configuration: configuration, logger: logger)
    let job = BlockingJob(name: "replay") { stop in
        try replayer.run(until: stop) { step in progress?(step) }
    }
    let health = ComponentHealth(logger: logger)
    let service = ComponentService(health.handle(for: "replay"), component: job, logger: logger)
    return ReplayRun(application: Application(services: [service], health: health, bootstrapServers: producerConfiguration.bootstrapServers,
                                              logger: logger),
                     outcome: job.outcome)
}

/// A replay, built: run `application`, then read its summary from `outcome`.
public struct ReplayRun: Sendable {
    public let application: Application
    /// What the replay did, once the application has run (its failure, if it failed).
    public let outcome: Completion<ReplaySummary>
}
