import Foundation
import HTTPServer
import HTTPTestClient
import Runtime

/// What the handler saw, sent back as JSON so tests can check decoding end to end.
struct EchoedRequest: Codable, Equatable {
    var method: String
    var path: String
    var rawTarget: String
    var query: [[String]]
    var host: String?
    var thread: String

    init(_ request: HTTPRequest, thread: String) {
        method = request.method
        path = request.path
        rawTarget = request.rawTarget
        query = request.query.map { [$0.name, $0.value] }
        host = request.header("HOST")
        self.thread = thread
    }
}

/// The rejection renderer the tests use: a JSON body naming the rejection, with the suggested status.
func renderRejection(_ rejection: HTTPRejection) -> HTTPResponse {
    let code: String
    switch rejection {
    case .targetTooLong: code = "target_too_long"
    case .headersTooLarge: code = "headers_too_large"
    case .badRequestTarget: code = "bad_request_target"
    case .contextUnavailable: code = "context_unavailable"
    }
    return HTTPResponse(
        status: rejection.status, contentType: "application/json",
        body: #"{"error":{"code":"\#(code)"}}"#)
}

/// Counts the contexts of one server that are alive, so a test can see them made and released.
final class LiveContextCounter: Sendable {
    private let count = Locked(0)
    var live: Int { count.value }
    func add(_ delta: Int) { count.withLock { $0 += delta } }
}

/// A worker context that reports its lifetime to a counter.
final class CountedContext {
    let counter: LiveContextCounter
    init(counter: LiveContextCounter) {
        self.counter = counter
        counter.add(1)
    }
    deinit { counter.add(-1) }
}

struct ContextUnavailable: Error {}

/// A server on an ephemeral port whose handler echoes the request as JSON, except for a few fixed routes.
func makeEchoServer(
    configuration: HTTPServerConfiguration = HTTPServerConfiguration(port: 0, threadCount: 2),
    makeContext: @escaping @Sendable () throws -> String = { "thread-\(pthread_self())" },
    logError: (@Sendable (String) -> Void)? = nil
) throws -> HTTPServer<String> {
    try HTTPServer<String>(
        configuration: configuration,
        makeContext: makeContext,
        handle: { request, context in
            switch request.path {
            case "/teapot":
                return HTTPResponse(
                    status: 418, headers: [("Content-Type", "text/plain"), ("X-Brew", "earl grey")],
                    body: Array("short and stout".utf8))
            case "/empty":
                return HTTPResponse(status: 204)
            case "/invalid-status":
                return HTTPResponse(status: 42, body: Array("odd".utf8))
            default:
                let body = (try? JSONEncoder().encode(EchoedRequest(request, thread: context))) ?? Data()
                return HTTPResponse(status: 200, contentType: "application/json", body: Array(body))
            }
        },
        rejectMalformed: renderRejection,
        logError: logError)
}

/// Collects log lines from any thread.
final class LogLines: Sendable {
    private let lines = Locked<[String]>([])
    var all: [String] { lines.value }
    func append(_ line: String) { lines.withLock { $0.append(line) } }
}

func echoed(_ response: TestResponse) throws -> EchoedRequest {
    try JSONDecoder().decode(EchoedRequest.self, from: Data(response.body))
}
