import Runtime

/// A small HTTP/1.1 server over libmicrohttpd that knows nothing of routes: every well-formed request
/// goes to `handle`, every malformed one to `rejectMalformed`, so the caller shapes every answer.
///
/// Requests run on libmicrohttpd's pool threads (`threadCount`). Each pool thread lazily builds its own
/// `WorkerContext` with `makeContext` on its first request and keeps it until the server stops; a
/// context is only ever used by the thread that made it, so it need not be thread-safe (one set of
/// SQLite connections per thread, for example). Handlers run on those threads, not on Swift's
/// cooperative pool, so they may block briefly; they must not call `stop()`. A handler may also put a
/// request off to the thread's next turn (`HTTPResponse.later`) to do the work of several at once.
public final class HTTPServer<WorkerContext>: Sendable {
    public let configuration: HTTPServerConfiguration
    private let daemon: MicroHTTPDaemon

    /// Starts listening before returning.
    /// - Parameters:
    ///   - makeContext: builds one thread's context; if it throws, that request is answered through
    ///     `rejectMalformed(.contextUnavailable(error))` and the next request on the thread tries again.
    ///   - handle: answers a request with the calling thread's context. It is total: it cannot fail.
    ///   - rejectMalformed: renders the requests refused before `handle` (see `HTTPRejection`).
    ///   - logError: receives libmicrohttpd's own diagnostics (one line each); nil discards them.
    public init(
        configuration: HTTPServerConfiguration,
        makeContext: @escaping @Sendable () throws -> WorkerContext,
        handle: @escaping @Sendable (HTTPRequest, inout WorkerContext) -> HTTPResponse,
        rejectMalformed: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        logError: (@Sendable (String) -> Void)? = nil
    ) throws(HTTPServerError) {
        let slot: ThreadLocal<WorkerContextBox<WorkerContext>>
        do {
            slot = try ThreadLocal()
        } catch {
            throw .cannotStart(address: "-", reason: error.description)
        }
        let respond: @Sendable (HTTPRequest) -> HTTPResponse = { request in
            let box: WorkerContextBox<WorkerContext>
            if let existing = slot.current {
                box = existing
            } else {
                do {
                    box = WorkerContextBox(try makeContext())
                } catch {
                    return rejectMalformed(.contextUnavailable(error))
                }
                slot.current = box
            }
            return handle(request, &box.context)
        }
        self.configuration = configuration
        self.daemon = try MicroHTTPDaemon(
            configuration: configuration, respond: respond, reject: rejectMalformed, logError: logError)
    }

    /// The port actually bound: the configured one, or the kernel's choice when that was 0.
    public var port: Int { daemon.port }

    /// True when the server listens on a loopback address only, out of reach of other machines.
    public var isLoopbackOnly: Bool { daemon.isLoopback }

    /// True when the server answers HTTPS only.
    public var usesTLS: Bool { configuration.tls != nil }

    /// Stops accepting, closes every connection, waits for the pool threads to finish and releases their
    /// contexts (each on its own thread). Idempotent; also done when the server is released.
    public func stop() {
        daemon.stop()
    }

    deinit {
        daemon.stop()
    }
}

/// One pool thread's context. Reached only from the thread that created it, through a `ThreadLocal`: when
/// a pool thread exits (at `stop()`), its box is released there, so contexts are torn down on the thread that used them.
private final class WorkerContextBox<WorkerContext> {
    var context: WorkerContext
    init(_ context: WorkerContext) { self.context = context }
}

