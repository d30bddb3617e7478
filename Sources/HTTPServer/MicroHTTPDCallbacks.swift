import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The C callbacks libmicrohttpd calls on its pool threads: thin trampolines that recover the
// `RequestDispatcher` from their `cls` pointer (unretained: `MicroHTTPDaemon` keeps it alive until the
// daemon has stopped) and the per-request `RequestRecord` from `con_cls`.

/// The identity unescaper: libmicrohttpd must not decode the target (a decoded `%00` would silently
/// truncate it); `RequestTarget` decodes it strictly instead.
let keepPercentEscapes: cp_mhd_unescape_callback = { _, _, string in
    string.map { strlen($0) } ?? 0
}

/// Called with the whole target, query included, before libmicrohttpd splits it; the copy becomes the
/// request's `con_cls` and lives until `releaseRequestRecord`.
///
/// It then empties the query in libmicrohttpd's own buffer (which `uri` points into, writable, though
/// typed const). libmicrohttpd would otherwise store every parameter in the connection's fixed memory
/// pool, where a few thousand `&` in an 8 KiB target exhaust it and the connection is dropped without an
/// answer; `RequestTarget` parses the query from the copy instead.
let recordRequestTarget: cp_mhd_uri_log_callback = { _, uri, _ in
    let record = RequestRecord.allocate(target: uri)
    if let uri, let questionMark = strchr(uri, Int32(UInt8(ascii: "?"))) {
        UnsafeMutablePointer(mutating: questionMark + 1).pointee = 0
    }
    return record
}

let releaseRequestRecord: MHD_RequestCompletedCallback = { _, _, requestContext, _ in
    guard let requestContext else { return }
    RequestRecord.deallocate(requestContext.pointee)
    requestContext.pointee = nil
}

let answerRequest: MHD_AccessHandlerCallback = {
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
    let round = state.pointee.round
    let receivedAt = state.pointee.receivedAt ?? .now
    state.pointee.receivedAt = receivedAt
    let answered = dispatcher.answer(connection, method: method, target: target, targetIsWhole: targetIsWhole, round: round,
                                     receivedAt: receivedAt)
    guard let answered else {
        // Later: suspended and at once resumed, the connection is served again on this thread's
        // next turn, after the other connections with data ready; the handler is called again then.
        state.pointee.round = round + 1
        MHD_suspend_connection(connection)
        MHD_resume_connection(connection)
        return .YES
    }
    return answered
}

let forwardLogMessage: MHD_LogCallback = { dispatcherPointer, format, arguments in
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
    /// The times the handler put the request off (`HTTPResponse.later`).
    var round = 0
    /// When the handler was first called for the request (round 0); nil before.
    var receivedAt: ContinuousClock.Instant?

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
