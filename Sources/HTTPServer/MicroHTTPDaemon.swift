import CMicroHTTPD
import Runtime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one running libmicrohttpd daemon: the only type that touches `MHD_Daemon`. It knows nothing of
/// worker contexts; `HTTPServer` hands it a `respond` function that already has one.
final class MicroHTTPDaemon: Sendable {
    let port: Int
    /// True when the bound address is a loopback one (127.0.0.0/8 or ::1): nothing beyond this
    /// machine can connect.
    let isLoopback: Bool
    private let dispatcher: RequestDispatcher
    /// The PEM texts libmicrohttpd was given, kept until it has stopped; nil without TLS.
    private let tlsMaterial: TLSMaterial?
    /// Non-nil while running; taken exactly once by `stop()`.
    private let running: Locked<DaemonPointer?>

    init(
        configuration: HTTPServerConfiguration,
        respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        reject: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        logError: (@Sendable (String) -> Void)?
    ) throws(HTTPServerError) {
        let configuration = try configuration.validated()
        let address = try ListenAddress(host: configuration.host, port: configuration.port)
        if configuration.tls != nil, MHD_is_feature_supported(.FEATURE_TLS) != .YES {
            throw .cannotStart(address: address.description, reason: "this libmicrohttpd was built without TLS (GnuTLS) support")
        }
        let tlsMaterial = configuration.tls.map(TLSMaterial.init)
        // libmicrohttpd explains a refused start (a certificate it cannot use, a key that does not
        // match it) only in its log: keep what it says while starting, for the error.
        let startLog = Locked<[String]?>([])
        let dispatcher = RequestDispatcher(
            maxRequestTargetBytes: configuration.maxRequestTargetBytes,
            maxHeaderBytes: configuration.maxHeaderBytes,
            maxHeaderCount: configuration.maxHeaderCount,
            respond: respond, reject: reject,
            logError: { message in
                let kept = startLog.withLock { lines -> Bool in
                    lines?.append(message)
                    return lines != nil
                }
                if !kept { logError?(message) }
            })
        if MHD_is_feature_supported(.FEATURE_AUTOSUPPRESS_SIGPIPE) != .YES {
            // Without it a client that hangs up mid-response would kill the process.
            signal(SIGPIPE, SIG_IGN)
        }
        let dispatcherPointer = Unmanaged.passUnretained(dispatcher).toOpaque()
        errno = 0
        let started: (daemon: OpaquePointer?, errno: Int32) = address.withSockAddr { sockAddr in
            // The logger first, so that libmicrohttpd routes the diagnostics about the other options here too.
            var flags = daemonFlags | MHD_USE_ERROR_LOG.rawValue
            var options = [cp_mhd_option_external_logger(forwardLogMessage, dispatcherPointer)]
            if let tlsMaterial {
                flags |= MHD_USE_TLS.rawValue
                options += [
                    cp_mhd_option_pointer(.HTTPS_MEM_CERT, tlsMaterial.certificate),
                    cp_mhd_option_pointer(.HTTPS_MEM_KEY, tlsMaterial.key),
                    cp_mhd_option_pointer(.HTTPS_PRIORITIES, tlsMaterial.priorities),
                ]
            }
            options += [
                cp_mhd_option_value(.THREAD_POOL_SIZE, configuration.threadCount),
                cp_mhd_option_value(.CONNECTION_LIMIT, configuration.connectionLimit),
                cp_mhd_option_value(.CONNECTION_TIMEOUT, configuration.connectionTimeoutSeconds),
                cp_mhd_option_value(.CONNECTION_MEMORY_LIMIT, configuration.connectionMemoryLimitBytes),
                cp_mhd_option_pointer(.SOCK_ADDR, UnsafeMutableRawPointer(mutating: sockAddr)),
                cp_mhd_option_uri_log(recordRequestTarget, nil),
                cp_mhd_option_notify_completed(releaseRequestRecord, nil),
                cp_mhd_option_unescape(keepPercentEscapes, nil),
            ]
            if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
            options.append(cp_mhd_option_end())
            return options.withUnsafeBufferPointer {
                (cp_mhd_start_daemon(flags, UInt16(configuration.port), answerRequest, dispatcherPointer, $0.baseAddress), errno)
            }
        }
        let said = startLog.withLock { lines in
            defer { lines = nil }
            return lines ?? []
        }
        guard let daemon = started.daemon else {
            // What libmicrohttpd said is more precise than errno, which GnuTLS may have left behind.
            let reason = !said.isEmpty ? said.joined(separator: "; ")
                : started.errno != 0 ? String(cString: strerror(started.errno)) : "libmicrohttpd gave no reason"
            throw .cannotStart(address: address.description, reason: reason)
        }
        for line in said { logError?(line) }
        self.port = Int(cp_mhd_bound_port(daemon))
        self.isLoopback = address.isLoopback
        self.tlsMaterial = tlsMaterial
        self.dispatcher = dispatcher
        self.running = Locked(DaemonPointer(daemon))
    }

    /// Stops accepting, closes every connection and joins the pool threads; safe to call repeatedly and
    /// from any thread except a request handler's (which would wait for itself).
    func stop() {
        let daemon = running.withLock { running in
            defer { running = nil }
            return running
        }
        if let daemon {
            MHD_stop_daemon(daemon.pointer)
        }
        withExtendedLifetime((dispatcher, tlsMaterial)) {}
    }

    deinit {
        stop()
    }
}

/// An internal polling thread per pool thread, with `poll()`: libmicrohttpd 0.9.75 with epoll stopped
/// answering at 128 concurrent connections (measured with one and with two pool threads), poll served
/// 100, 128 and 256 alike (figures in loadtest/baselines/c-mhd-sqlite.c).
private let daemonFlags: UInt32 = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_POLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue

/// A daemon pointer that may cross threads: libmicrohttpd allows `MHD_stop_daemon` from any thread, and
/// `MicroHTTPDaemon` calls it exactly once, under its mutex.
private struct DaemonPointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
