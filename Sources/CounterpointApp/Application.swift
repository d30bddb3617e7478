import Kafka
import Logging
import Runtime
import ServiceLifecycle

/// What a builder returns: one command's long-running components as swift-service-lifecycle
/// services, started in order and stopped in the reverse order, each waited for before the
/// next stops. Run it once: on its own until SIGINT/SIGTERM (`runUntilSignalled`, as the
/// executable does) or as a service of the caller's `ServiceGroup` (as the tests do), whose
/// graceful shutdown stops it.
///
/// Everything was built when the builder returned — the stores are open, the reader is bound
/// (`readerPort`), the consumers exist — but for what a `Preparation` makes inside the group
/// (`run`'s components, after its demo history and first batch run). A failure that no
/// component recovers from ends `run` with that component's error, after the others have stopped.
public final class Application: Service {
    /// The components' states, as `/readyz` and `/v1/status` report them.
    public let health: ComponentHealth
    /// The port the reader listens on — the one picked when port 0 was asked for; nil when the
    /// command runs no reader.
    public let readerPort: Int?
    /// The Kafka bootstrap servers the components use: the ones given, or the embedded broker's.
    public let bootstrapServers: String?
    private let services: Locked<[any ApplicationService]?>
    private let broker: Locked<KafkaMockCluster?>
    private let claim: Locked<DirectoryLock?>
    private let whenStopped: (@Sendable () -> Void)?
    private let logger: Logger

    /// - Parameters:
    ///   - broker: an embedded broker the services are clients of, each of them holding it too
    ///     (`embeddedCluster`): it stops once they and the application have let it go.
    ///   - claim: a claim on the data directory, given up after the broker has stopped.
    ///   - whenStopped: runs once every service has stopped.
    init(services: [any ApplicationService], health: ComponentHealth, readerPort: Int? = nil, bootstrapServers: String? = nil,
         broker: KafkaMockCluster? = nil, claim: DirectoryLock? = nil, logger: Logger, whenStopped: (@Sendable () -> Void)? = nil) {
        self.services = Locked(services)
        self.health = health
        self.readerPort = readerPort
        self.bootstrapServers = bootstrapServers
        self.broker = Locked(broker)
        self.claim = Locked(claim)
        self.whenStopped = whenStopped
        self.logger = logger
    }

    /// Runs the components until they end or the surrounding `ServiceGroup` shuts down gracefully.
    public func run() async throws {
        try await run(untilSignalled: false)
    }

    /// Runs the components until they end or SIGINT/SIGTERM arrives.
    public func runUntilSignalled() async throws {
        try await run(untilSignalled: true)
    }

    private func run(untilSignalled: Bool) async throws {
        let outcome: Result<Void, any Error>
        do {
            try await runServices(untilSignalled: untilSignalled)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        whenStopped?()
        await releaseBroker()
        claim.set(nil)
        try outcome.get()
    }

    /// Lets the embedded broker go and waits until it has stopped. Its clients may outlive
    /// `runServices` by a moment — the threads and tasks that ran and stopped them let go of
    /// them a little after they said so — so each holds the broker itself (`embeddedCluster`)
    /// and it stops after the last of them, never seen to go away by one.
    private func releaseBroker() async {
        guard let stopped = broker.withLock({ broker in defer { broker = nil }; return broker?.stopped }) else { return }
        let limit = Self.brokerStopLimit
        let stoppedInTime = (try? await BlockingThread.run(name: "broker stop") { stopped.wait(timeout: limit) != nil }) ?? false
        if !stoppedInTime {
            logger.warning("the embedded Kafka broker is still held \(limit.seconds) s after every service stopped; giving up the data directory meanwhile")
        }
    }

    /// How long `run` waits for the last client of its embedded broker to be gone.
    static let brokerStopLimit: Duration = .seconds(5)

    private func runServices(untilSignalled: Bool) async throws {
        guard let services = services.withLock({ services in defer { services = nil }; return services }) else {
            throw ApplicationError.alreadyRun
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.map(\.configuration), gracefulShutdownSignals: untilSignalled ? [.sigterm, .sigint] : [],
            logger: logger))
        try await group.run()
    }
}

public enum ApplicationError: Error, CustomStringConvertible {
    case alreadyRun

    public var description: String { "an application runs once; build a new one" }
}

/// A service of an application's group, with what its end does to the group.
protocol ApplicationService: Service {
    var configuration: ServiceGroupConfiguration.ServiceConfiguration { get }
}

extension ComponentService: ApplicationService {}
