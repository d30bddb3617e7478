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

    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }
}
