import Logging
import Realtime
import Runtime

/// `counterpoint consume`: the realtime layer on its own — one member of the consumer group
/// `configuration.group`, counting into `configuration.store`.
///
/// The consumer is made here (off the cooperative pool: reaching the broker and opening the
/// store block), so a bad configuration fails the build. Its state goes to the application's
/// `health` (or to `configuration.health` when one is given).
/// - Parameter onStarted: called once the consumer runs, inside the group.
public func buildConsume(_ configuration: RealtimeConfiguration, logger: Logger,
                         onStarted: (@Sendable () -> Void)? = nil) async throws -> Application {
    var configuration = configuration
    let health = configuration.health ?? ComponentHealth(logger: logger).handle(for: "consumer")
    configuration.health = health
    let made = configuration
    let consumer = try await BlockingThread.run(name: "connect") { try RealtimeConsumer(configuration: made, logger: logger) }
    let service = ComponentService(health, component: consumer, logger: logger, onStarted: onStarted)
    return Application(services: [service], health: health.board, bootstrapServers: configuration.bootstrapServers, logger: logger)
}
