#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket address to bind, resolved once from the configured host and port.
struct ListenAddress: CustomStringConvertible {
    private var storage = sockaddr_storage()
    let isIPv6: Bool
    let description: String

    init(host: String, port: Int) throws(HTTPServerError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        defer { if let results { freeaddrinfo(results) } }
        guard status == 0, let first = results, let address = first.pointee.ai_addr else {
            throw .cannotResolveHost(host: host, reason: String(cString: gai_strerror(status)))
        }
        withUnsafeMutableBytes(of: &storage) { destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(first.pointee.ai_addrlen)))
        }
        isIPv6 = first.pointee.ai_family == AF_INET6
        description = isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// 127.0.0.0/8 or ::1 (also as the IPv4-mapped ::ffff:127.x.y.z).
    var isLoopback: Bool {
        withUnsafeBytes(of: storage) { raw in
            if isIPv6 {
                let address = raw.load(fromByteOffset: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!, as: in6_addr.self)
                let bytes = withUnsafeBytes(of: address) { Array($0) }
                let mappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
                return bytes == [UInt8](repeating: 0, count: 15) + [1] || (Array(bytes[..<12]) == mappedPrefix && bytes[12] == 127)
            }
            let address = raw.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!, as: in_addr.self)
            return withUnsafeBytes(of: address) { $0[0] } == 127
        }
    }

    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }
}
