import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP/1.1 response as read off the wire.
struct HTTPResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

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

/// A deliberately small HTTP/1.1 client over a raw TCP socket to 127.0.0.1, so that tests can
/// send exactly the bytes they mean — broken request lines, 10,000-byte targets, odd methods —
/// which a real HTTP library would refuse or repair. One connection per request
/// (`Connection: close`); every read and write gives up after a timeout instead of hanging.
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
        let connection = try Connection(port: port, timeoutSeconds: timeoutSeconds)
        try connection.send(bytes)
        if closeWriteSide { connection.closeWriteSide() }
        let received = try connection.receiveUntilClosed()
        return received.isEmpty ? nil : try HTTPResponse(parsing: received, isHead: isHead)
    }

    /// An open connection that stays open: for slow or half-sent requests.
    func open() throws -> Connection {
        try Connection(port: port, timeoutSeconds: timeoutSeconds)
    }

    /// One TCP connection; closed on deinit.
    final class Connection {
        private let descriptor: Int32

        init(port: Int, timeoutSeconds: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw CommandError(description: "socket: errno \(errno)") }
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard status == 0 else {
                let error = errno
                close(descriptor)
                throw CommandError(description: "connect to 127.0.0.1:\(port): \(String(cString: strerror(error)))")
            }
        }

        deinit { close(descriptor) }

        /// Sends everything; a server that answers early and closes (a 414 before the whole
        /// target arrived) may reset the connection, which is not an error here.
        func send(_ bytes: [UInt8]) throws {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if written < 0 {
                    if errno == EPIPE || errno == ECONNRESET { return }
                    throw CommandError(description: "send: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }

        func closeWriteSide() { shutdown(descriptor, Int32(SHUT_WR)) }

        /// Everything until the server closes (or resets) the connection.
        func receiveUntilClosed() throws -> [UInt8] {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += chunk[..<count]
                } else if count == 0 || errno == ECONNRESET {
                    return received
                } else if errno == EINTR {
                    continue
                } else {
                    throw CommandError(description: "receive: \(String(cString: strerror(errno))) after \(received.count) bytes")
                }
            }
        }
    }
}

extension HTTPResponse {
    init(parsing bytes: [UInt8], isHead: Bool) throws {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw CommandError(description: "no end of headers in \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
        let lines = String(decoding: bytes[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let statusFields = lines[0].split(separator: " ", maxSplits: 2)
        guard statusFields.count >= 2, statusFields[0].hasPrefix("HTTP/1."), let status = Int(statusFields[1]) else {
            throw CommandError(description: "bad status line: \(lines[0])")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        self.init(status: status, headers: headers, body: Array(bytes[(headEnd + 4)...]))
        if !isHead, let length = header("Content-Length").flatMap(Int.init), length < body.count {
            body = Array(body.prefix(length))
        }
    }
}
