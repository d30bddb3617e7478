import Foundation
@testable import HTTPServer
import HTTPTestClient
import Patience
import Testing

@Suite("HTTPServer over real sockets", .onTestThreads)
struct HTTPServerTests {
    @Test("a route answers with exactly the status, headers and body its handler returned")
    func handlerResponseIsSentAsIs() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        let response = try client.request("/teapot")
        #expect(response.status == 418)
        #expect(response.header("Content-Type") == "text/plain")
        #expect(response.header("X-Brew") == "earl grey")
        #expect(response.header("Content-Length") == "15")
        #expect(response.text == "short and stout")
    }

    @Test("the handler sees the method, decoded path, raw target and headers")
    func handlerSeesTheRequest() throws {
        let server = try makeEchoServer()
        let response = try TestClient(port: server.port).request("/v1/tracks/42/plays?from=2026-11-20T10%3A00%3A00Z")
        let request = try echoed(response)
        #expect(response.status == 200)
        #expect(request.method == "GET")
        #expect(request.path == "/v1/tracks/42/plays")
        #expect(request.rawTarget == "/v1/tracks/42/plays?from=2026-11-20T10%3A00%3A00Z")
        #expect(request.query == [["from", "2026-11-20T10:00:00Z"]])
        #expect(request.host == "127.0.0.1")
    }

    @Test("a status outside 200...599 is sent as 500 rather than refused by libmicrohttpd")
    func invalidStatusBecomes500() throws {
        let server = try makeEchoServer()
        let response = try TestClient(port: server.port).request("/invalid-status")
        #expect(response.status == 500)
        #expect(response.text == "odd")
    }

    @Test("HEAD gets the GET headers and Content-Length but no body")
    func headHasNoBody() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        let head = try client.request("/teapot", method: "HEAD")
        #expect(head.status == 418)
        #expect(head.header("Content-Length") == "15")
        #expect(head.header("X-Brew") == "earl grey")
        // Were a body sent, it would be read here as the start of the next response and fail to parse.
        let next = try client.request("/teapot")
        #expect(next.status == 418)
        #expect(next.text == "short and stout")
    }

    @Test("two requests on one keep-alive connection both get answers and the connection stays open")
    func keepAliveServesSeveralRequests() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        let first = try client.request("/first")
        let second = try client.request("/second")
        #expect(try echoed(first).path == "/first")
        #expect(try echoed(second).path == "/second")
        #expect(first.header("Connection")?.lowercased() != "close")
        #expect(second.header("Connection")?.lowercased() != "close")
    }

    @Test("pipelined requests sent together are answered in order")
    func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        try client.send((1...3).map { "GET /p\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
        let paths = try (1...3).map { _ in try echoed(client.readResponse()).path }
        #expect(paths == ["/p1", "/p2", "/p3"])
    }

    @Test("256 concurrent connections are all answered")
    func manyConcurrentConnectionsAreAnswered() throws {
        let server = try makeEchoServer()
        let clients = try (0..<256).map { _ in try TestClient(port: server.port) }
        for (index, client) in clients.enumerated() {
            try client.send("GET /c\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
        }
        var answered = 0
        for (index, client) in clients.enumerated() {
            let response = try client.readResponse()
            if response.status == 200, try echoed(response).path == "/c\(index)" { answered += 1 }
        }
        #expect(answered == 256)
    }

    @Test("a request answered later is served again on its thread after the others with data ready, received when it first was; one put off too often gets 500")
    func laterAnswersComeInTheNextRound() throws {
        // The handler gathers each request's path in round 0 and answers in round 1 with the
        // number of paths gathered when the first of them was answered: one "statement" for all.
        struct Gathering { var waiting: [String] = []; var batches: [String: Int] = [:]; var receivedAt: [String: ContinuousClock.Instant] = [:] }
        let server = try HTTPServer<Gathering>(
            configuration: HTTPServerConfiguration(port: 0, threadCount: 1),
            makeContext: { Gathering() },
            handle: { request, gathering in
                if request.path == "/never" { return .later }
                guard request.round > 0 else {
                    gathering.waiting.append(request.path)
                    gathering.receivedAt[request.path] = request.receivedAt
                    return .later
                }
                // A request answered later keeps the time it was first taken up.
                let sameStart = gathering.receivedAt.removeValue(forKey: request.path) == request.receivedAt
                if gathering.batches[request.path] == nil {
                    for path in gathering.waiting { gathering.batches[path] = gathering.waiting.count }
                    gathering.waiting.removeAll()
                }
                let batch = gathering.batches.removeValue(forKey: request.path) ?? 0
                return HTTPResponse(status: sameStart ? 200 : 409, contentType: "text/plain",
                                    body: "\(request.path) round \(request.round) batch \(batch)")
            },
            rejectMalformed: renderRejection)
        let clients = try (0..<64).map { _ in try TestClient(port: server.port) }
        for (index, client) in clients.enumerated() {
            try client.send("GET /c\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
        }
        var batches: [Int] = []
        for (index, client) in clients.enumerated() {
            let response = try client.readResponse()
            #expect(response.status == 200)
            let words = response.text.split(separator: " ")
            #expect(words.prefix(3) == ["/c\(index)", "round", "1"], "\(response.text)")
            batches.append(Int(words.last ?? "") ?? 0)
        }
        #expect(batches.allSatisfy { $0 >= 1 }, "every request was answered from a batch that held it: \(batches)")
        #expect(batches.max() ?? 0 > 1, "requests with data ready at once were gathered: \(batches)")
        // The connection stays usable after an answer that came later.
        #expect(try clients[0].request("/again").status == 200)
        #expect(try clients[1].request("/never").status == 500)
    }

    @Test("every pool thread builds its own context once and uses it for all its requests")
    func contextsArePerThread() throws {
        let server = try makeEchoServer()
        let clients = try (0..<16).map { _ in try TestClient(port: server.port) }
        var contextsByThreadName: Set<String> = []
        for _ in 0..<4 {
            for client in clients {
                contextsByThreadName.insert(try echoed(client.request("/which")).thread)
            }
        }
        #expect(!contextsByThreadName.isEmpty)
        #expect(contextsByThreadName.count <= 2)
    }

    @Test("other methods, even made-up ones, reach the handler so the caller can answer 405")
    func everyMethodReachesTheHandler() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"] {
            let response = try client.request("/any", method: method, headers: ["Content-Length: 0"])
            #expect(response.status == 200)
            #expect(try echoed(response).method == method)
        }
    }

    @Test("a request body is read and discarded, and the connection stays usable")
    func requestBodyIsDiscarded() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        let body = String(repeating: "x", count: 100_000)
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(try echoed(client.readResponse()).method == "POST")
        try client.send("PUT /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(try echoed(client.readResponse()).path == "/chunked")
        #expect(try echoed(client.request("/after")).path == "/after")
    }

    @Test("a context that cannot be made gives 503 through the renderer, and later requests are still served")
    func failingContextGives503AndServerRecovers() throws {
        let attempts = LiveContextCounter()
        let server = try makeEchoServer(
            configuration: HTTPServerConfiguration(port: 0, threadCount: 1),
            makeContext: {
                attempts.add(1)
                if attempts.live <= 2 { throw ContextUnavailable() }
                return "recovered"
            })
        let client = try TestClient(port: server.port)
        for _ in 0..<2 {
            let refused = try client.request("/x")
            #expect(refused.status == 503)
            #expect(refused.text.contains("context_unavailable"))
        }
        let served = try client.request("/x")
        #expect(served.status == 200)
        #expect(try echoed(served).thread == "recovered")
        #expect(attempts.live == 3)
    }

    @Test("stop() is idempotent, closes the listener and releases every thread's context")
    func stopIsIdempotentAndReleasesContexts() throws {
        let counter = LiveContextCounter()
        let server = try HTTPServer<CountedContext>(
            configuration: HTTPServerConfiguration(port: 0, threadCount: 2),
            makeContext: { CountedContext(counter: counter) },
            handle: { _, _ in HTTPResponse(status: 200) },
            rejectMalformed: renderRejection)
        let port = server.port
        let clients = try (0..<8).map { _ in try TestClient(port: port) }
        for client in clients { #expect(try client.request("/").status == 200) }
        #expect(counter.live >= 1)
        server.stop()
        server.stop()
        #expect(counter.live == 0)
        #expect(throws: TestClientError.self) { try TestClient(port: port) }
        for client in clients { #expect(try client.isClosedByServer()) }
    }

    @Test("releasing the server without stop() stops it too")
    func deinitStops() throws {
        var server: HTTPServer<String>? = try makeEchoServer()
        let port = try #require(server?.port)
        #expect(try TestClient(port: port).request("/").status == 200)
        server = nil
        #expect(throws: TestClientError.self) { try TestClient(port: port) }
    }

    @Test("port 0 binds an ephemeral port that is reported back")
    func ephemeralPortIsReported() throws {
        let server = try makeEchoServer()
        #expect(server.port > 0)
        #expect(server.port != 8080)
    }

    @Test("a port already in use is an error that names the address, and no other port")
    func portInUseIsAnError() throws {
        let first = try makeEchoServer()
        do {
            _ = try makeEchoServer(configuration: HTTPServerConfiguration(port: first.port))
            Issue.record("a second server bound port \(first.port)")
        } catch let error as HTTPServerError {
            let text = "\(error)"
            #expect(text.contains(":\(first.port):"), "\(text)")
            #expect(text.contains("in use"), "\(text)")
            #expect(!text.contains("port 0"), "libmicrohttpd's message names a port other than the one asked for: \(text)")
        }
    }

    @Test("out-of-range configuration values and unresolvable hosts are refused before starting")
    func invalidConfigurationIsRefused() {
        #expect(throws: HTTPServerError.self) { try makeEchoServer(configuration: HTTPServerConfiguration(port: 70000)) }
        #expect(throws: HTTPServerError.self) { try makeEchoServer(configuration: HTTPServerConfiguration(port: 0, threadCount: 0)) }
        #expect(throws: HTTPServerError.self) {
            try makeEchoServer(configuration: HTTPServerConfiguration(host: "no such host.invalid", port: 0))
        }
    }
}
