import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one running libmicrohttpd daemon: the only type that touches `MHD_Daemon`. It knows nothing of
/// worker contexts; `HTTPServer` hands it a `respond` function that already has one.
final class MicroHTTPDaemon: Sendable {
    let port: Int
    private let dispatcher: RequestDispatcher
    /// Non-nil while running; taken exactly once by `stop()`.
    private let running: Mutex<DaemonPointer?>

    init(
        configuration: HTTPServerConfiguration,
        respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        reject: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        logError: (@Sendable (String) -> Void)?
    ) throws(HTTPServerError) {
        let configuration = try configuration.validated()
        let address = try ListenAddress(host: configuration.host, port: configuration.port)
        let dispatcher = RequestDispatcher(
            maxRequestTargetBytes: configuration.maxRequestTargetBytes,
            maxHeaderBytes: configuration.maxHeaderBytes,
            maxHeaderCount: configuration.maxHeaderCount,
            respond: respond, reject: reject, logError: logError)
        if MHD_is_feature_supported(.FEATURE_AUTOSUPPRESS_SIGPIPE) != .YES {
            // Without it a client that hangs up mid-response would kill the process.
            signal(SIGPIPE, SIG_IGN)
        }
        let dispatcherPointer = Unmanaged.passUnretained(dispatcher).toOpaque()
        let daemon = address.withSockAddr { sockAddr in
            var options: [MHD_OptionItem] = [
                cp_mhd_option_value(.THREAD_POOL_SIZE, configuration.threadCount),
                cp_mhd_option_value(.CONNECTION_LIMIT, configuration.connectionLimit),
                cp_mhd_option_value(.CONNECTION_TIMEOUT, configuration.connectionTimeoutSeconds),
                cp_mhd_option_value(.CONNECTION_MEMORY_LIMIT, configuration.connectionMemoryLimitBytes),
                cp_mhd_option_pointer(.SOCK_ADDR, UnsafeMutableRawPointer(mutating: sockAddr)),
                cp_mhd_option_uri_log(recordRequestTarget, nil),
                cp_mhd_option_notify_completed(releaseRequestRecord, nil),
                cp_mhd_option_unescape(keepPercentEscapes, nil),
            ]
            var flags = daemonFlags
            if logError != nil {
                flags |= MHD_USE_ERROR_LOG.rawValue
                options.append(cp_mhd_option_external_logger(forwardLogMessage, dispatcherPointer))
            }
            if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
            options.append(cp_mhd_option_end())
            return options.withUnsafeBufferPointer {
                cp_mhd_start_daemon(flags, answerRequest, dispatcherPointer, $0.baseAddress)
            }
        }
        guard let daemon else {
            let reason = errno == 0 ? "libmicrohttpd gave no reason" : String(cString: strerror(errno))
            throw .cannotStart(address: address.description, reason: reason)
        }
        self.port = Int(cp_mhd_bound_port(daemon))
        self.dispatcher = dispatcher
        self.running = Mutex(DaemonPointer(daemon))
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
        withExtendedLifetime(dispatcher) {}
    }

    deinit {
        stop()
    }
}

/// An internal polling thread per pool thread; `poll()` rather than epoll because libmicrohttpd 0.9.75
/// with epoll stopped answering past 128 concurrent connections on a one-thread pool, and poll measured
/// no slower here (see loadtest/baselines).
private let daemonFlags: UInt32 = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_POLL.rawValue

/// A daemon pointer that may cross threads: libmicrohttpd allows `MHD_stop_daemon` from any thread, and
/// `MicroHTTPDaemon` calls it exactly once, under its mutex.
private struct DaemonPointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

// MARK: - Trampolines: libmicrohttpd calls these on its pool threads.

/// The identity unescaper: libmicrohttpd must not decode the target (a decoded `%00` would silently
/// truncate it); `RequestTarget` decodes it strictly instead.
private let keepPercentEscapes: cp_mhd_unescape_callback = { _, _, string in
    string.map { strlen($0) } ?? 0
}

/// Called with the whole target, query included, before libmicrohttpd splits it; the copy becomes the
/// request's `con_cls` and lives until `releaseRequestRecord`.
///
/// It then empties the query in libmicrohttpd's own buffer (which `uri` points into, writable, though
/// typed const). libmicrohttpd would otherwise store every parameter in the connection's fixed memory
/// pool, where a few thousand `&` in an 8 KiB target exhaust it and the connection is dropped without an
/// answer; `RequestTarget` parses the query from the copy instead.
private let recordRequestTarget: cp_mhd_uri_log_callback = { _, uri, _ in
    let record = RequestRecord.allocate(target: uri)
    if let uri, let questionMark = strchr(uri, Int32(UInt8(ascii: "?"))) {
        UnsafeMutablePointer(mutating: questionMark + 1).pointee = 0
    }
    return record
}

private let releaseRequestRecord: MHD_RequestCompletedCallback = { _, _, requestContext, _ in
    guard let requestContext else { return }
    RequestRecord.deallocate(requestContext.pointee)
    requestContext.pointee = nil
}

private let answerRequest: MHD_AccessHandlerCallback = {
    dispatcherPointer, connection, url, method, version, _, uploadDataSize, requestContext in
    guard let dispatcherPointer, let connection, let url, let method, let version,
          let record = requestContext?.pointee
    else {
        return .NO
    }
    let state = record.assumingMemoryBound(to: RequestRecord.self)
    if !state.pointee.headersSeen {
        // Answering now, before libmicrohttpd has seen the end of the request, would make it close
        // the connection after the response; the answer waits for the next call.
        state.pointee.headersSeen = true
        return .YES
    }
    if let uploadDataSize, uploadDataSize.pointee != 0 {
        uploadDataSize.pointee = 0  // A body is read and discarded: no route takes one.
        return .YES
    }
    let dispatcher = Unmanaged<RequestDispatcher>.fromOpaque(dispatcherPointer).takeUnretainedValue()
    let target = RequestRecord.target(of: record)
    // A raw NUL in the request line ends the C string libmicrohttpd gives us, silently cutting the
    // target short. libmicrohttpd 0.9.75 keeps the line in place as "target\0version", so the version
    // starts right after a whole target; anything else (a NUL, or stray spaces it skipped) is refused.
    let targetIsWhole = UnsafeRawPointer(url) + target.count + 1 == UnsafeRawPointer(version)
    return dispatcher.answer(connection, method: method, target: target, targetIsWhole: targetIsWhole)
}

private let forwardLogMessage: MHD_LogCallback = { dispatcherPointer, format, arguments in
    guard let dispatcherPointer, let format, let arguments else { return }
    let dispatcher = Unmanaged<RequestDispatcher>.fromOpaque(dispatcherPointer).takeUnretainedValue()
    var buffer = [CChar](repeating: 0, count: 512)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    dispatcher.logError?(message.hasSuffix("\n") ? String(message.dropLast()) : message)
}

/// The per-request state kept in `con_cls`: whether the headers-only first call has happened, then the
/// target's bytes. One allocation per request, freed when libmicrohttpd reports it complete.
struct RequestRecord {
    var headersSeen: Bool
    var targetLength: Int

    static func allocate(target: UnsafePointer<CChar>?) -> UnsafeMutableRawPointer {
        let length = target.map { strlen($0) } ?? 0
        let record = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<RequestRecord>.stride + length, alignment: MemoryLayout<RequestRecord>.alignment)
        record.initializeMemory(as: RequestRecord.self, repeating: RequestRecord(headersSeen: false, targetLength: length), count: 1)
        let bytes = (record + MemoryLayout<RequestRecord>.stride).bindMemory(to: UInt8.self, capacity: length)
        if let target {
            UnsafeRawPointer(target).withMemoryRebound(to: UInt8.self, capacity: length) {
                bytes.initialize(from: $0, count: length)
            }
        }
        return record
    }

    static func target(of record: UnsafeMutableRawPointer) -> UnsafeBufferPointer<UInt8> {
        let length = record.assumingMemoryBound(to: RequestRecord.self).pointee.targetLength
        let bytes = (record + MemoryLayout<RequestRecord>.stride).assumingMemoryBound(to: UInt8.self)
        return UnsafeBufferPointer(start: bytes, count: length)
    }

    static func deallocate(_ record: UnsafeMutableRawPointer?) {
        record?.deallocate()
    }
}
