import Logging
import Reader
import Runtime

/// `counterpoint serve`: the HTTP reader on its own, over the stores `configuration.store` names.
///
/// The stores are opened and the address is bound here (off the cooperative pool: both block),
/// so a data directory that cannot be read or an address in use fails the build with one error.
/// - Parameter onListening: called with the bound port once the reader serves, inside the group
///   (SIGINT/SIGTERM handling in place): the moment to tell scripts that the process is up.
public func buildServe(_ configuration: ReaderConfiguration, logger: Logger,
                       onListening: (@Sendable (_ port: Int) -> Void)? = nil) async throws -> Application {
    let server = try await BlockingThread.run(name: "open") { try ReaderServer(configuration: configuration, logger: logger) }
    let health = ComponentHealth(logger: logger, clock: configuration.clock)
    let port = server.port
    let reader = ComponentService(health.handle(for: "reader"), component: server, logger: logger) { onListening?(port) }
    return Application(services: [reader], health: health, readerPort: port, logger: logger)
}
