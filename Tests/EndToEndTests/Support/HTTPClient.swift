import Foundation
import HTTPTestClient

/// One HTTP/1.1 response as read off the wire: the tests' one response shape.
typealias HTTPResponse = TestResponse

extension TestResponse {
    var contentType: String? { header("Content-Type") }

    var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    /// `error.code` of a JSON error answer.
    var errorCode: String? {
        (jsonObject?["error"] as? [String: Any])?["code"] as? String
    }

    var errorMessage: String? {
        (jsonObject?["error"] as? [String: Any])?["message"] as? String
    }
}

/// Requests to a `counterpoint` process on 127.0.0.1, one connection each (`Connection: close`),
/// through the tests' one HTTP client (`TestClient`): every read and write gives up after a
/// timeout instead of hanging.
struct HTTPClient {
    let port: Int
    var timeoutSeconds = 10

    /// Sends `METHOD target HTTP/1.1` with a Host header and `Connection: close`, then reads the answer.
    func request(_ target: String, method: String = "GET", headers: [String] = []) throws -> HTTPResponse {
        let head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            + headers.map { $0 + "\r\n" }.joined() + "\r\n"
        guard let response = try exchange(Array(head.utf8), isHead: method == "HEAD") else {
            throw CommandError(description: "\(method) \(target.prefix(200)): connection closed without an answer")
        }
        return response
    }

    /// Sends raw bytes, optionally closes the sending side, and reads until the server closes.
    /// Nil when the server closed the connection without answering.
    func exchange(_ bytes: [UInt8], closeWriteSide: Bool = false, isHead: Bool = false) throws -> HTTPResponse? {
        let connection = try open()
        try connection.send(bytes, whileOpen: true)
        if closeWriteSide { connection.closeWriteSide() }
        let received = try connection.receiveUntilClosed()
        return received.isEmpty ? nil : try HTTPResponse(parsing: received, isHead: isHead)
    }

    /// An open connection that stays open: for slow or half-sent requests.
    func open() throws -> TestClient {
        try TestClient(port: port, receiveTimeoutSeconds: timeoutSeconds)
    }
}
