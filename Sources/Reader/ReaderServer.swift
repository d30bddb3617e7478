import CounterpointCore
import CounterStore
import Credentials
import HTTPServer
import Logging
import Runtime

/// The HTTP reader of docs/openapi.yaml: libmicrohttpd's thread pool in front of per-thread store
/// connections. Build it with `ReaderServer(configuration:logger:)`; it serves from then on
/// until `stop()` (or deinit). As a `BlockingComponent`, `start()` has nothing left to do.
public final class ReaderServer: BlockingComponent {
    private let server: HTTPServer<ReaderWorker>
    private let janitor: SnapshotJanitor
    /// Completes when the server has stopped.
    public let ended = Completion<Void>()
    private let stopSignal = StopSignal()

    /// The bound port (the real one when the configuration asked for port 0).
    public var port: Int { server.port }

    /// True when the reader answers HTTPS only.
    public var usesTLS: Bool { server.usesTLS }

    public init(configuration: ReaderConfiguration, logger: Logger) throws {
        // Open the stores once up front so that a bad data directory fails `serve` at start
        // with one clear error instead of answering 503 forever. Only standbys answering a URI
        // that asks for a writable server is a failover under way, not a bad configuration: the
        // reader answers 503 until a primary takes its calls, as it does after losing one.
        do {
            _ = try configuration.store.openReader()
        } catch where StoreBackend.awaitingPrimary(error) {
            logger.warning("the store cannot be read yet: \(StoreBackend.awaitingPrimaryCause); answering 503 until a primary takes over",
                           metadata: ["store": "\(configuration.store)", "store.error": "\(error)"])
        }
        var serverConfiguration = configuration.server
        if let tls = configuration.tls { serverConfiguration.tls = try tls.load() }
        // Half the server's threads at most may hash passwords: the others keep answering.
        let authenticator = try configuration.passwordFile.map {
            try BasicAuthenticator(passwordFile: .load(path: $0), concurrentHashing: serverConfiguration.threadCount / 2)
        }
        let routes = ReaderRoutes(configuration: configuration, authenticator: authenticator, logger: logger)
        let store = configuration.store
        let snapshotAge = configuration.snapshotAge
        let coalescesLookups = configuration.coalescesLookups
        let janitor = SnapshotJanitor(interval: snapshotAge > .zero ? snapshotAge : .seconds(1))
        self.janitor = janitor
        server = try HTTPServer(
            configuration: serverConfiguration,
            makeContext: {
                let slot = StoreSlot(store: store, snapshotAge: snapshotAge, coalescesLookups: coalescesLookups)
                janitor.register(slot)
                return ReaderWorker(slot: slot)
            },
            handle: { request, worker in routes.respond(to: request, worker: &worker) },
            rejectMalformed: { rejection in routes.respond(to: rejection) })
        logger.info("reader listening", metadata: [
            "http.host": "\(configuration.server.host)", "http.port": "\(server.port)",
            "http.tls": "\(server.usesTLS)", "http.credentials": "\(authenticator != nil)",
            "store": "\(store)",
        ])
        ReaderAccess.warnIfExposed(host: configuration.server.host, port: server.port, isLoopbackOnly: server.isLoopbackOnly,
                                   usesTLS: server.usesTLS, requiresCredentials: authenticator != nil, logger: logger)
    }

    public func start() {}

    /// Stops serving and joins the server's threads. Safe to call more than once, from any
    /// thread: every call returns once the first has finished.
    public func stop() {
        if stopSignal.request() {
            server.stop()
            janitor.stop()
            ended.succeed()
        }
        _ = ended.wait()
    }

    deinit {
        // The janitor's thread holds its objects, not this server: it ends only when asked.
        janitor.stop()
    }
}

/// What one server thread owns: its own read connections (SQLite connections are used by
/// one thread at a time) and its cache of metric handles.
///
/// The connections open on the first request that needs them, and again after a failure,
/// so that `/healthz` and answers to bad input never depend on whether the store can be
/// read right now — only the routes that read it answer 503.
struct ReaderWorker {
    let slot: StoreSlot
    var metrics = RequestMetrics()
}
