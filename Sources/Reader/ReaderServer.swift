import CounterpointCore
import CounterStore
import HTTPServer
import Logging
import Runtime

/// The HTTP reader of SPEC §5: libmicrohttpd's thread pool in front of per-thread store
/// connections. Build it with `ReaderServer(configuration:logger:)`; it serves from then on
/// until `stop()` (or deinit). As a `BlockingComponent`, `start()` has nothing left to do.
public final class ReaderServer: BlockingComponent {
    private let server: HTTPServer<ReaderWorker>
    private let janitor: SnapshotJanitor
    /// Completes when the server has stopped.
    public let ended = Completion<Void>()
    private let stopping = Locked(false)

    /// The bound port (the real one when the configuration asked for port 0).
    public var port: Int { server.port }

    public init(configuration: ReaderConfiguration, logger: Logger) throws {
        // Open the stores once up front so that a bad data directory fails `serve` at start
        // with one clear error instead of answering 503 forever.
        _ = try configuration.store.openReader()
        let routes = ReaderRoutes(configuration: configuration, logger: logger)
        let store = configuration.store
        let snapshotAge = configuration.snapshotAge
        let janitor = SnapshotJanitor(interval: snapshotAge > .zero ? snapshotAge : .seconds(1))
        self.janitor = janitor
        server = try HTTPServer(
            configuration: configuration.server,
            makeContext: {
                let slot = StoreSlot(store: store, snapshotAge: snapshotAge)
                janitor.register(slot)
                return ReaderWorker(slot: slot)
            },
            handle: { request, worker in routes.respond(to: request, worker: &worker) },
            rejectMalformed: { rejection in routes.respond(to: rejection) })
        logger.info("reader listening", metadata: [
            "http.host": "\(configuration.server.host)", "http.port": "\(server.port)",
            "store": "\(store)",
        ])
    }

    public func start() {}

    /// Stops serving and joins the server's threads. Safe to call more than once, from any
    /// thread: every call returns once the first has finished.
    public func stop() {
        let isFirst = stopping.withLock { stopping in
            defer { stopping = true }
            return !stopping
        }
        if isFirst {
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
