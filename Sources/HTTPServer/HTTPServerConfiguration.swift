#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How an `HTTPServer` listens and what it accepts. Every default is usable as is; the values are
/// translated into libmicrohttpd options in one place (`MicroHTTPDaemon`).
public struct HTTPServerConfiguration: Sendable {
    /// The address to listen on: an IPv4 or IPv6 literal, or a host name resolved once at start.
    /// Default `127.0.0.1`, so nothing is exposed beyond the machine unless asked for.
    public var host: String
    /// The TCP port; 0 lets the kernel choose a free one, which `HTTPServer.port` then reports. Default 8080.
    public var port: Int
    /// Worker threads in libmicrohttpd's pool; each owns its connections and its own `WorkerContext`.
    /// Default: the number of cores, at least 2.
    public var threadCount: Int
    /// Concurrent connections accepted; further ones are refused by the kernel backlog. Default 1024.
    public var connectionLimit: Int
    /// Seconds of inactivity after which an idle or stalled connection is closed. Default 30.
    public var connectionTimeoutSeconds: Int
    /// Longest request target (path and query, as received); longer ones are answered 414 through the
    /// caller's rejection renderer. Default 8192.
    public var maxRequestTargetBytes: Int
    /// Largest header section (each header counted as `name: value\r\n`); larger ones are answered 431
    /// through the caller's rejection renderer. Default 16384.
    public var maxHeaderBytes: Int
    /// Most header fields in one request; more are answered 431 through the caller's rejection renderer.
    /// Default 100 (Apache's `LimitRequestFields`). Bounded so that a request within every limit is sure
    /// to fit libmicrohttpd's per-connection memory, which spends about 56 bytes on each field.
    public var maxHeaderCount: Int
    /// With credentials, the server answers HTTPS only (TLS 1.2 or newer, through libmicrohttpd's
    /// GnuTLS support); nil, the default, answers plain HTTP.
    public var tls: TLSCredentials?

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        threadCount: Int = HTTPServerConfiguration.defaultThreadCount,
        connectionLimit: Int = 1024,
        connectionTimeoutSeconds: Int = 30,
        maxRequestTargetBytes: Int = 8192,
        maxHeaderBytes: Int = 16384,
        maxHeaderCount: Int = 100,
        tls: TLSCredentials? = nil
    ) {
        self.host = host
        self.port = port
        self.threadCount = threadCount
        self.connectionLimit = connectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.maxRequestTargetBytes = maxRequestTargetBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.tls = tls
    }

    /// The number of online cores, at least 2.
    public static var defaultThreadCount: Int {
        max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// libmicrohttpd keeps each connection's request line, header fields (about 56 bytes of bookkeeping
    /// each), cookies and response header block in one fixed-size pool, and answers by itself (414 or
    /// 431 with its own HTML body, then closes) when a request does not fit. The pool is sized so that
    /// every request within our limits fits and reaches our renderer; what meets libmicrohttpd's answer
    /// instead is a request line or header section larger than the pool (40 KiB with the defaults), or
    /// a Cookie header of several hundred cookies (libmicrohttpd 0.9.75 always splits cookies).
    /// The 8 KiB beyond the limits leave room for the response header block. No larger than that:
    /// libmicrohttpd zeroes the whole pool between two requests on a keep-alive connection, so every
    /// extra KiB costs time on every request (the zeroing took 7% of the server's CPU at 32 KiB, 9% at 64).
    var connectionMemoryLimitBytes: Int {
        let needed = maxRequestTargetBytes + maxHeaderBytes + maxHeaderCount * 64 + 8 * 1024
        let page = 4096
        return max(32 * 1024, (needed + page - 1) / page * page)
    }

    func validated() throws(HTTPServerError) -> HTTPServerConfiguration {
        func require(_ condition: Bool, _ message: String) throws(HTTPServerError) {
            if !condition { throw HTTPServerError.invalidConfiguration(message) }
        }
        try require((0...65535).contains(port), "port must be between 0 and 65535, got \(port)")
        try require((1...1024).contains(threadCount), "threadCount must be between 1 and 1024, got \(threadCount)")
        try require((1...1_000_000).contains(connectionLimit), "connectionLimit must be between 1 and 1000000, got \(connectionLimit)")
        try require((0...86_400).contains(connectionTimeoutSeconds), "connectionTimeoutSeconds must be between 0 and 86400, got \(connectionTimeoutSeconds)")
        try require((16...1_048_576).contains(maxRequestTargetBytes), "maxRequestTargetBytes must be between 16 and 1048576, got \(maxRequestTargetBytes)")
        try require((256...1_048_576).contains(maxHeaderBytes), "maxHeaderBytes must be between 256 and 1048576, got \(maxHeaderBytes)")
        try require((1...10_000).contains(maxHeaderCount), "maxHeaderCount must be between 1 and 10000, got \(maxHeaderCount)")
        try require(!host.isEmpty, "host must not be empty")
        return self
    }
}
