#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The HTTP client every suite shares (the HTTPServer, Reader and end-to-end tests): it talks to a
/// real server over a real socket, byte for byte, so hostile requests — broken request lines,
/// 10,000-byte targets, odd methods, half-sent heads — can be sent exactly as written, which a
/// real HTTP library would refuse or repair.
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

extension TestResponse {
    /// The status line and headers of a response head (without its blank line).
    init(head: [UInt8]) throws {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw TestClientError(description: "bad status line in: \(text.prefix(300))")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: " "))
        }
        self.init(status: status, headers: headers, body: [])
    }

    /// A whole response read until the server closed the connection (`Connection: close`): the
    /// body is what follows the head, up to its Content-Length when it has one (none for `HEAD`).
    public init(parsing bytes: [UInt8], isHead: Bool = false) throws {
        guard let headEnd = TestClient.firstIndex(of: TestClient.headEnd, in: bytes) else {
            throw TestClientError(description: "no end of headers in \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
        try self.init(head: Array(bytes[..<headEnd]))
        body = Array(bytes[(headEnd + 4)...])
        if !isHead, let length = header("Content-Length").flatMap(Int.init), length < body.count {
            body = Array(body.prefix(length))
        }
    }
}

/// A tiny blocking HTTP client over one TCP connection to 127.0.0.1, closed on deinit. Sends and
/// receives give up after a timeout, so a server that stops answering fails the test instead of
/// hanging it. The default, 60 s, only bounds a hang: with every suite running at once on two
/// cores, a PostgreSQL answer for 1,000 tracks once took longer than the 10 s it used to be.
public final class TestClient {
    private let socketDescriptor: Int32
    private var buffer: [UInt8] = []
    static let headEnd: [UInt8] = [13, 10, 13, 10]

    public init(port: Int, receiveTimeoutSeconds: Int = 60) throws {
        socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw TestClientError(description: "socket: \(errno)") }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socketDescriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
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

    /// Sends every byte. `whileOpen`: a server that answers early and closes (a 414 before the whole
    /// target arrived) may reset the connection, which then ends the send instead of failing it.
    public func send(_ bytes: [UInt8], whileOpen: Bool = false) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(socketDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }   // a signal came first: send again
            if written < 0 && whileOpen && (errno == EPIPE || errno == ECONNRESET) { return }
            guard written > 0 else { throw TestClientError(description: "send failed: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// Tells the server nothing more will be sent (a half-close).
    public func closeWriteSide() { shutdown(socketDescriptor, Int32(SHUT_WR)) }

    /// Everything the server sends until it closes (or resets) the connection.
    public func receiveUntilClosed() throws -> [UInt8] {
        while try receive() {}
        defer { buffer.removeAll() }
        return buffer
    }

    /// Sends `GET target` (or another method) with a Host header and keep-alive, then reads the answer.
    public func request(_ target: String, method: String = "GET", headers: [String] = []) throws -> TestResponse {
        let extra = headers.map { $0 + "\r\n" }.joined()
        try send("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)\r\n")
        return try readResponse(bodyExpected: method != "HEAD")
    }

    /// Reads one response of a kept-alive connection: its head, then Content-Length bytes of body.
    public func readResponse(bodyExpected: Bool = true) throws -> TestResponse {
        let headEnd = try readUntil(Self.headEnd)
        let response = try TestResponse(head: Array(buffer[..<headEnd]))
        buffer.removeFirst(headEnd + 4)
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
            if let end = Self.firstIndex(of: marker, in: buffer) { return end }
            guard try receive() else {
                throw TestClientError(description: "connection closed after \(buffer.count) bytes")
            }
        }
    }

    static func firstIndex(of marker: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= marker.count else { return nil }
        return (0...(bytes.count - marker.count)).first { bytes[$0..<($0 + marker.count)].elementsEqual(marker) }
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
        throw TestClientError(description: "receive failed or timed out: \(String(cString: strerror(errno))) after \(buffer.count) bytes")
    }
}

private extension Substring {
    func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
