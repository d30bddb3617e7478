#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The HTTP client the HTTPServer and Reader tests share: it talks to a real server over a real
/// socket, byte for byte, so hostile requests can be sent exactly as written.
public struct TestClientError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// One parsed HTTP/1.1 response, as a blocking test client reads it.
public struct TestResponse {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A tiny blocking HTTP client over one TCP connection to 127.0.0.1. Reads give up after a receive
/// timeout, so a server that stops answering fails the test instead of hanging it.
public final class TestClient {
    private let socketDescriptor: Int32
    private var buffer: [UInt8] = []

    public init(port: Int, receiveTimeoutSeconds: Int = 10) throws {
        socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw TestClientError(description: "socket: \(errno)") }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            // No close here: the object is fully initialized, so deinit runs and closes the socket. Closing
            // twice could close a descriptor the server under test has meanwhile been given.
            throw TestClientError(description: "connect to port \(port): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        if socketDescriptor >= 0 { close(socketDescriptor) }
    }

    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(socketDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }   // a signal came first: send again
            guard written > 0 else { throw TestClientError(description: "send failed: errno \(errno)") }
            offset += written
        }
    }

    /// Sends `GET target` (or another method) with a Host header and keep-alive, then reads the answer.
    public func request(_ target: String, method: String = "GET", headers: [String] = []) throws -> TestResponse {
        let extra = headers.map { $0 + "\r\n" }.joined()
        try send("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)\r\n")
        return try readResponse(bodyExpected: method != "HEAD")
    }

    public func readResponse(bodyExpected: Bool = true) throws -> TestResponse {
        let headEnd = try readUntil([13, 10, 13, 10])
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw TestClientError(description: "bad status line in: \(head)")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: " "))
        }
        let response = TestResponse(status: status, headers: headers, body: [])
        guard bodyExpected else { return response }
        let length = Int(response.header("Content-Length") ?? "0") ?? 0
        while buffer.count < length {
            guard try receive() else { throw TestClientError(description: "connection closed mid-body") }
        }
        var complete = response
        complete.body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return complete
    }

    /// True once the server has closed the connection (end of stream) with nothing more to read.
    public func isClosedByServer() throws -> Bool {
        buffer.isEmpty ? !(try receive()) : false
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        while true {
            if let end = firstIndex(of: marker) { return end }
            guard try receive() else {
                throw TestClientError(description: "connection closed after \(buffer.count) bytes")
            }
        }
    }

    private func firstIndex(of marker: [UInt8]) -> Int? {
        guard buffer.count >= marker.count else { return nil }
        return (0...(buffer.count - marker.count)).first { buffer[$0..<($0 + marker.count)].elementsEqual(marker) }
    }

    /// Reads what is available; false at end of stream or on a reset connection.
    private func receive() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var count = 0
        repeat {   // a signal that comes first (EINTR) is not the peer's doing: receive again
            count = chunk.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
        } while count < 0 && errno == EINTR
        if count > 0 {
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
        if count == 0 || errno == ECONNRESET { return false }
        throw TestClientError(description: "receive failed or timed out: errno \(errno)")
    }
}

private extension Substring {
    func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
