import Logging
import Realtime
import Runtime

/// `counterpoint consume`: the realtime layer on its own — one member of the consumer group
/// `configuration.group`, counting into `configuration.store`.
///
/// The first consumer is made here (off the cooperative pool: reaching the broker and opening
/// the store block), so a bad configuration fails the build; a SQLite store on a full disk does
/// not (see `RealtimeStart`). After a failure a new consumer resumes from the stored offsets.
/// Its state goes to the application's `health` (or to `configuration.health` when one is given).
/// - Parameter onStarted: called once the first consumer runs, inside the group.
public func buildConsume(_ configuration: RealtimeConfiguration, logger: Logger,
                         onStarted: (@Sendable () -> Void)? = nil) async throws -> Application {
    var configuration = configuration
    let health = configuration.health ?? ComponentHealth(logger: logger, clock: configuration.clock).handle(for: "consumer")
    configuration.health = health
    let start = RealtimeStart(configuration: configuration, logger: logger)
    let realtime = try await BlockingThread.run(name: "connect") { try start.service(onStarted: onStarted) }
    return Application(services: [realtime.service], health: health.board, bootstrapServers: configuration.bootstrapServers,
                       logger: logger)
}
