import Archive
import Kafka
import Logging
import Runtime

/// `counterpoint archive`: the archiver on its own — every event of `configuration.topic` filed
/// under its UTC hour in `configuration.logRoot`.
///
/// The first archiver is made here (off the cooperative pool: reaching the broker blocks), so a
/// bad configuration fails the build; after a failure (a full disk) a new one resumes from the
/// group's committed offsets after a growing delay. Its Kafka connection is reported in the
/// application's `health` as "archiver Kafka connection". When it has stopped, its totals are logged.
/// - Parameter onStarted: called once the archiver runs, inside the group.
public func buildArchive(_ configuration: ArchiverConfiguration, logger: Logger,
                         onStarted: (@Sendable () -> Void)? = nil) async throws -> Application {
    let health = ComponentHealth(logger: logger, clock: configuration.clock)
    var configuration = configuration
    configuration.consumer.healthReport = KafkaHealthReport(health: health, component: "archiver Kafka connection")
    let made = configuration
    let archivers = try await BlockingThread.run(name: "connect") {
        try ComponentSupply { try Archiver(configuration: made, logger: logger) }
    }
    let service = archivers.service(health.handle(for: "archiver"), logger: logger, onStarted: onStarted)
    return Application(services: [service], health: health, bootstrapServers: configuration.consumer.bootstrapServers,
                       logger: logger) {
        guard let status = archivers.current?.status() else { return }
        logger.info("archive stopped", metadata: [
            "archive.events": "\(status.eventsArchived)", "archive.late_events": "\(status.lateEvents)",
            "archive.invalid_messages": "\(status.invalidMessages)", "archive.closed_hours": "\(status.closedHours)",
        ])
    }
}
