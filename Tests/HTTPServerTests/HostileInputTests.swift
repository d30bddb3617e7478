import Foundation
@testable import HTTPServer
import HTTPTestClient
import Patience
import Testing

@Suite("HTTPServer under hostile input", .onTestThreads)
struct HostileInputTests {
    @Test("a 10,000-byte target gets 414 from the caller's rejection renderer")
    func longTargetGets414() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        let response = try client.request("/" + String(repeating: "a", count: 9_999))
        #expect(response.status == 414)
        #expect(response.text.contains("target_too_long"))
        #expect(try echoed(client.request("/still-here")).path == "/still-here")
    }

    @Test("a target of exactly the limit is accepted")
    func targetAtTheLimitIsAccepted() throws {
        let server = try makeEchoServer()
        let target = "/" + String(repeating: "b", count: 8191)
        let response = try TestClient(port: server.port).request(target)
        #expect(response.status == 200)
        #expect(try echoed(response).path == target)
    }

    @Test("headers over the limit get 431 from the caller's rejection renderer")
    func largeHeadersGet431() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        let headers = (0..<20).map { "X-Filler-\($0): " + String(repeating: "h", count: 1000) }
        let response = try client.request("/", headers: headers)
        #expect(response.status == 431)
        #expect(response.text.contains("headers_too_large"))
    }

    @Test("more header fields than the limit get 431 from the caller's rejection renderer")
    func tooManyHeaderFieldsGet431() throws {
        let server = try makeEchoServer()
        let response = try TestClient(port: server.port).request("/", headers: (0..<150).map { "X-\($0): v" })
        #expect(response.status == 431)
        #expect(response.text.contains("headers_too_large"))
    }

    @Test("a request at every limit at once (8 KiB target, 100 fields, 16 KiB of headers) reaches the handler")
    func requestAtAllLimitsReachesTheHandler() throws {
        let server = try makeEchoServer()
        let target = "/" + String(repeating: "t", count: 8191)
        // With the client's Host field: 100 fields and 17 + 99 * 163 = 16154 bytes as counted.
        let headers = (0..<99).map { String(format: "X-Fill-%02d: ", $0) + String(repeating: "f", count: 150) }
        let response = try TestClient(port: server.port).request(target, headers: headers)
        #expect(response.status == 200)
        #expect(try echoed(response).path == target)
    }

    @Test("thousands of query parameters within the target limit are all parsed rather than dropped")
    func manyQueryParametersAreParsed() throws {
        let server = try makeEchoServer()
        let target = "/many?" + String(repeating: "a&", count: 4000)
        let request = try echoed(TestClient(port: server.port).request(target))
        #expect(request.query.count == 4000)
        #expect(request.rawTarget == target)
    }

    @Test("requests far past libmicrohttpd's own buffer are refused by it, logged, and the server keeps serving")
    func requestsPastTheConnectionPoolAreRefused() throws {
        let log = LogLines()
        let server = try makeEchoServer(logError: log.append)
        let hugeHeader = try TestClient(port: server.port)
        let response = try hugeHeader.request("/", headers: ["X-Huge: " + String(repeating: "h", count: 200_000)])
        #expect([413, 414, 431].contains(response.status))
        let hugeTarget = try TestClient(port: server.port)
        #expect([413, 414, 431].contains(try hugeTarget.request("/" + String(repeating: "t", count: 200_000)).status))
        #expect(try TestClient(port: server.port).request("/fine").status == 200)
        #expect(log.all.contains { $0.contains("431") })
        #expect(log.all.allSatisfy { !$0.hasSuffix("\n") })
    }

    @Test(
        "invalid percent-encoding, encoded NUL and invalid UTF-8 get 400 through the renderer",
        arguments: ["/a%00b", "/%zz", "/%C3%28", "/a%", "/a%4", "/?q=%00", "/?q=%G1", "/?%FF=1", "/?q=%C3"])
    func malformedTargetsGet400(target: String) throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        let response = try client.request(target)
        #expect(response.status == 400)
        #expect(response.text.contains("bad_request_target"))
        #expect(try client.request("/ok").status == 200)
    }

    @Test("valid escapes are decoded exactly once, and dot segments are passed on unresolved")
    func validEscapesAreDecodedOnce() throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        #expect(try echoed(client.request("/%2541")).path == "/%41")
        #expect(try echoed(client.request("/a/..%2Fb")).path == "/a/../b")
        #expect(try echoed(client.request("/caf%C3%A9")).path == "/café")
        #expect(try echoed(client.request("/a+b")).path == "/a+b")
    }

    @Test("query parameters keep their order, duplicates, '+' as space and empty values")
    func queryIsDecodedFaithfully() throws {
        let server = try makeEchoServer()
        let response = try TestClient(port: server.port).request("/q?b=2&a=1&b=3&text=a+b%2Bc&empty=&flag&&x=%3D%26")
        #expect(try echoed(response).query == [
            ["b", "2"], ["a", "1"], ["b", "3"], ["text", "a b+c"], ["empty", ""], ["flag", ""], ["x", "=&"],
        ])
    }

    @Test(
        "a raw NUL or space in the request line gets 400 instead of a silently shortened target",
        arguments: ["GET /a\0b HTTP/1.1", "GET /a\0 HTTP/1.1", "GET /a b HTTP/1.1", "GET /a?q=1\0x HTTP/1.1", "GET /a  HTTP/1.1"])
    func rawNulOrSpaceInRequestLineGets400(requestLine: String) throws {
        let server = try makeEchoServer()
        let client = try TestClient(port: server.port)
        try client.send("\(requestLine)\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
    }

    @Test("the absolute form of a target is read as its path")
    func absoluteFormIsAccepted() throws {
        let server = try makeEchoServer()
        let request = try echoed(TestClient(port: server.port).request("http://example.test:8080/abs?x=1"))
        #expect(request.path == "/abs")
        #expect(request.query == [["x", "1"]])
    }

    @Test("a target that is not a path gets 400", arguments: ["*", "abc", "http://host-only"])
    func nonPathTargetGets400(target: String) throws {
        let server = try makeEchoServer()
        let response = try TestClient(port: server.port).request(target, method: "OPTIONS")
        #expect(response.status == 400)
    }

    @Test("garbage bytes, binary zeros and cut-off requests never stop the server")
    func garbageDoesNotCrash() throws {
        let server = try makeEchoServer()
        var generator = SystemRandomNumberGenerator()
        let garbage: [[UInt8]] = [
            (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) },
            Array("GET /a\0b HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\r\nX-Zero: a\0b\r\n\r\n".utf8),
            Array("\r\n\r\n\r\n".utf8),
            Array("GET / HTTP/9.9\r\n\r\n".utf8),
            Array("GET /no-version\r\n\r\n".utf8),
            Array("GET  HTTP/1.1\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\r\nBad Header Line\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\r\nContent-Length: -5\r\n\r\n".utf8),
            Array("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8),
            Array("G".utf8),
        ]
        for bytes in garbage {
            let client = try TestClient(port: server.port, receiveTimeoutSeconds: 1)
            try? client.send(bytes)
            _ = try? client.readResponse()
        }
        #expect(try echoed(TestClient(port: server.port).request("/alive")).path == "/alive")
    }

    @Test("a header with bytes that are not UTF-8 reaches the handler repaired")
    func nonUTF8HeaderIsRepaired() throws {
        let server = try HTTPServer<Void>(
            configuration: HTTPServerConfiguration(port: 0),
            makeContext: {},
            handle: { request, _ in HTTPResponse(status: 200, contentType: "text/plain", body: request.header("x-name") ?? "none") },
            rejectMalformed: renderRejection)
        let client = try TestClient(port: server.port)
        try client.send(Array("GET / HTTP/1.1\r\nHost: x\r\nX-Name: caf".utf8) + [0xE9] + Array("\r\n\r\n".utf8))
        #expect(try client.readResponse().text == "caf\u{FFFD}")
    }

    @Test("a response header with CR or LF is dropped rather than splitting the response")
    func headerInjectionIsDropped() throws {
        let server = try HTTPServer<Void>(
            configuration: HTTPServerConfiguration(port: 0),
            makeContext: {},
            handle: { _, _ in
                HTTPResponse(status: 200, headers: [("X-Evil", "a\r\nSet-Cookie: b"), ("X-Fine", "yes")], body: [])
            },
            rejectMalformed: renderRejection)
        let response = try TestClient(port: server.port).request("/")
        #expect(response.status == 200)
        #expect(response.header("Set-Cookie") == nil)
        #expect(response.header("X-Fine") == "yes")
    }
}

@Suite("Request target decoding", .onTestThreads)
struct RequestTargetTests {
    private func parse(_ target: String) throws(HTTPRejection) -> RequestTarget {
        let bytes = Array(target.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(HTTPRejection) in try RequestTarget.parse(buffer) }
    }

    @Test("a plain path shares its storage with the raw target and has no query")
    func plainPath() throws {
        let target = try parse("/v1/tracks/1/plays")
        #expect(target.path == "/v1/tracks/1/plays")
        #expect(target.raw == "/v1/tracks/1/plays")
        #expect(target.query.isEmpty)
    }

    @Test("an empty query and a lone '?' give no parameters")
    func emptyQuery() throws {
        #expect(try parse("/a?").query.isEmpty)
        #expect(try parse("/a?&&").query.isEmpty)
    }

    @Test("spaces and control characters are refused even where libmicrohttpd let them through")
    func controlCharactersAreRefused() {
        #expect(throws: HTTPRejection.self) { try parse("/a\tb") }
        #expect(throws: HTTPRejection.self) { try parse("/a\u{7F}") }
        #expect(throws: HTTPRejection.self) { try parse("/a b") }
    }

    @Test("raw UTF-8 in a target is accepted, raw invalid bytes are not")
    func rawBytes() throws {
        #expect(try parse("/café").path == "/café")
        let invalid: [UInt8] = Array("/a".utf8) + [0xFF]
        #expect(throws: HTTPRejection.self) {
            try invalid.withUnsafeBufferPointer { buffer throws(HTTPRejection) in try RequestTarget.parse(buffer) }
        }
    }
}
