import CounterpointCore
import CounterStore
import Credentials
import HTTPServer
import Logging
import Runtime

/// Dispatches a request to its route and turns every outcome — an answer, bad input, a
/// store failure — into a response. Nothing a client sends reaches past this type as an
/// error: the worst answer is a JSON 503.
struct ReaderRoutes: Sendable {
    let configuration: ReaderConfiguration
    let logger: Logger
    let counts: CountAnswers
    let dimensions: DimensionAnswers
    let listeners: ListenerAnswers
    let statusPage: StatusAnswer
    /// Checks credentials when a password file is configured.
    let authenticator: BasicAuthenticator?
    /// A store that cannot be read fails every request: its log line is said every few seconds.
    private let storeFailureLog = LogThrottle(every: .seconds(10))

    init(configuration: ReaderConfiguration, authenticator: BasicAuthenticator?, logger: Logger) {
        self.configuration = configuration
        self.authenticator = authenticator
        self.logger = logger
        self.counts = CountAnswers(clock: configuration.clock)
        self.dimensions = DimensionAnswers(counts: counts)
        self.listeners = ListenerAnswers(counts: counts)
        self.statusPage = StatusAnswer(liveStatus: configuration.liveStatus, health: configuration.health)
    }

    func respond(to request: HTTPRequest, worker: inout ReaderWorker) -> HTTPResponse {
        var label = "unmatched"
        var response: HTTPResponse
        do {
            let match = Route.match(request.path)
            // Credentials before anything else, so that without them not even a 404 tells which routes exist.
            if let refusal = ReaderAccess.refusal(of: request, route: match?.route, authenticator: authenticator) {
                label = match?.route.template ?? "unmatched"
                throw refusal
            }
            guard let match else { throw APIError.notFound }
            label = match.route.template
            let subject = try match.subject.get()
            guard request.method == "GET" || request.method == "HEAD" else { throw APIError.methodNotAllowed }
            response = try match.route.handler(self, request, subject, worker.slot)
        } catch let error as APIError {
            response = Self.errorResponse(error)
        } catch let error as CounterStoreError where error.isDamagedData {
            // Stored bytes this program cannot read: this answer fails, the server goes on.
            if let held = storeFailureLog.admit() {
                logger.error("stored data cannot be read", metadata: ["http.route": "\(label)", "error": "\(error)",
                                                                      "http.failures_not_logged": "\(held)"])
            }
            response = Self.errorResponse(APIError(status: 500, code: "damaged_data", message: error.description))
        } catch {
            if let held = storeFailureLog.admit() {
                logger.warning("store read failed", metadata: ["http.route": "\(label)", "error": "\(error)",
                                                              "http.failures_not_logged": "\(held)"])
            }
            response = Self.errorResponse(.storeUnavailable(String(describing: error)))
        }
        // A request put off is counted once, when it is answered, and timed from its first round.
        if response.isLater { return response }
        response.headers.append(Self.noSniff)
        worker.metrics.record(route: label, status: response.status, duration: ContinuousClock.now - request.receivedAt)
        return response
    }

    // MARK: The answers of the routes that are more than one call (see `Route.table`).

    func status(_ request: HTTPRequest, store: StoreSlot) throws -> HTTPResponse {
        _ = try QueryValues(request.query, allowed: QueryValues.noParameters)
        return .json(try store.withReader { try statusPage.render(reader: $0, counts: counts) })
    }

    func readiness(_ request: HTTPRequest, store: StoreSlot) throws -> HTTPResponse {
        _ = try QueryValues(request.query, allowed: QueryValues.noParameters)
        guard try store.withReader({ $0.isReadable() }) else { throw APIError.storeUnavailable("the stores cannot be read") }
        // A component that is not doing its job makes the process not ready (docs/runbook.md),
        // as does one still starting — `run`'s preparation says what it waits for.
        let unwell = configuration.health?.reports().filter { $0.state != .running } ?? []
        guard unwell.isEmpty else {
            throw APIError(status: 503, code: "component_not_running", message: unwell.map { report in
                "\(report.name) is \(report.state.name)" + (report.state.reason.map { ": \($0)" } ?? "")
            }.joined(separator: "; "), components: unwell)
        }
        return .json(Array(#"{"status":"ready"}"#.utf8))
    }

    func metrics(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try QueryValues(request.query, allowed: QueryValues.noParameters)
        return HTTPResponse(status: 200,
                            headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                            body: Array(configuration.metricsExposition().utf8))
    }

    /// Answers what the HTTP layer refused before routing: over-long targets and headers,
    /// undecodable paths, a worker that could not open its store.
    func respond(to rejection: HTTPRejection) -> HTTPResponse {
        let error: APIError
        switch rejection {
        case .targetTooLong:
            error = APIError(status: 414, code: "uri_too_long", message: "the request target is too long")
        case .headersTooLarge:
            error = APIError(status: 431, code: "headers_too_large", message: "the request headers are too large")
        case .badRequestTarget(let reason):
            error = .badRequest("invalid_request_target", "the request target cannot be decoded: \(reason)")
        case .contextUnavailable(let reason):
            error = .storeUnavailable(String(describing: reason))
        }
        // Refused before routing, on no worker's metric cache: rare enough to look the
        // handle up each time, and still counted so that a flood of them shows.
        RequestMetrics.recordRejected(status: error.status)
        var response = Self.errorResponse(error)
        response.headers.append(Self.noSniff)
        return response
    }

    /// On every answer: browsers take each one as the type it says it is, never a guessed one.
    static let noSniff = ("X-Content-Type-Options", "nosniff")

    static func errorResponse(_ error: APIError) -> HTTPResponse {
        var headers = [("Content-Type", "application/json; charset=utf-8")]
        if error.status == 405 { headers.append(("Allow", "GET, HEAD")) }
        if error == .unauthorized { headers.append(("WWW-Authenticate", #"Basic realm="counterpoint", charset="UTF-8""#)) }
        if error == .credentialsBusy { headers.append(("Retry-After", "1")) }
        return HTTPResponse(status: error.status, headers: headers, body: error.body)
    }
}

extension HTTPResponse {
    static func json(_ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")], body: body)
    }
}
