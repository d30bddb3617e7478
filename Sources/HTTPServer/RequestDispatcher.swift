import CMicroHTTPD

/// Turns one complete request, as libmicrohttpd holds it, into an `HTTPRequest`, gets its answer, and
/// queues that answer. Immutable; runs concurrently on every pool thread.
final class RequestDispatcher: Sendable {
    let maxRequestTargetBytes: Int
    let maxHeaderBytes: Int
    let maxHeaderCount: Int
    let respond: @Sendable (HTTPRequest) -> HTTPResponse
    let reject: @Sendable (HTTPRejection) -> HTTPResponse
    let logError: (@Sendable (String) -> Void)?

    init(
        maxRequestTargetBytes: Int,
        maxHeaderBytes: Int,
        maxHeaderCount: Int,
        respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        reject: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        logError: (@Sendable (String) -> Void)?
    ) {
        self.maxRequestTargetBytes = maxRequestTargetBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.respond = respond
        self.reject = reject
        self.logError = logError
    }

    /// Queues the answer; nil when the handler answered `HTTPResponse.later` (in a round it may).
    func answer(
        _ connection: OpaquePointer, method: UnsafePointer<CChar>, target: UnsafeBufferPointer<UInt8>, targetIsWhole: Bool, round: Int,
        receivedAt: ContinuousClock.Instant
    ) -> MHD_Result? {
        let response = targetIsWhole
            ? response(connection, method: method, target: target, round: round, receivedAt: receivedAt)
            : reject(.badRequestTarget(reason: "the request line contains a NUL byte or stray whitespace"))
        if response.isLater && round < HTTPResponse.maxRounds { return nil }
        return queue(response, on: connection)
    }

    private func response(_ connection: OpaquePointer, method: UnsafePointer<CChar>, target: UnsafeBufferPointer<UInt8>,
                          round: Int, receivedAt: ContinuousClock.Instant) -> HTTPResponse {
        if target.count > maxRequestTargetBytes {
            return reject(.targetTooLong(byteCount: target.count))
        }
        var collector = HeaderCollector(byteLimit: maxHeaderBytes, countLimit: maxHeaderCount)
        collector.headers.reserveCapacity(8)  // Most requests have a few: one allocation, not three.
        withUnsafeMutablePointer(to: &collector) {
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, collectHeader, $0)
        }
        if collector.isOverLimit {
            return reject(.headersTooLarge(byteCount: collector.byteCount, fieldCount: collector.fieldCount))
        }
        let parsed: RequestTarget
        do {
            parsed = try RequestTarget.parse(target)
        } catch {
            return reject(error)
        }
        return respond(HTTPRequest(
            method: String(cString: method), path: parsed.path, rawTarget: parsed.raw,
            query: parsed.query, headers: collector.headers, round: round, receivedAt: receivedAt))
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let created = response.body.withUnsafeBytes {
            MHD_create_response_from_buffer($0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse = created else { return .NO }  // Out of memory: MHD closes the connection.
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in response.headers where !isContentLength(name) {
            // `withCString` lends a native string's own bytes; passing the strings as pointer
            // arguments directly copied each into a new array first.
            _ = name.withCString { name in value.withCString { value in MHD_add_response_header(mhdResponse, name, value) } }
        }
        let status = (200...599).contains(response.status) ? response.status : 500
        return MHD_queue_response(connection, UInt32(status), mhdResponse)
    }
}

/// libmicrohttpd sends the body's own length; a second Content-Length from the handler could only conflict.
private func isContentLength(_ name: String) -> Bool {
    name.utf8.count == 14 && equalIgnoringASCIICase(name, "Content-Length")
}

/// Gathers the header fields, their number and their size as `name: value\r\n`; stops once over a limit.
private struct HeaderCollector {
    let byteLimit: Int
    let countLimit: Int
    var byteCount = 0
    var fieldCount = 0
    var headers: [(name: String, value: String)] = []

    var isOverLimit: Bool { byteCount > byteLimit || fieldCount > countLimit }
}

private let collectHeader: MHD_KeyValueIteratorN = { collectorPointer, _, name, nameLength, value, valueLength in
    guard let collector = collectorPointer?.assumingMemoryBound(to: HeaderCollector.self) else { return .NO }
    collector.pointee.byteCount += nameLength + valueLength + 4
    collector.pointee.fieldCount += 1
    if collector.pointee.isOverLimit { return .NO }
    collector.pointee.headers.append((name: string(name, nameLength), value: string(value, valueLength)))
    return .YES
}

/// Header bytes that are not UTF-8 (obsolete but legal) are repaired, never trusted or trapped on.
private func string(_ characters: UnsafePointer<CChar>?, _ length: Int) -> String {
    guard let characters, length > 0 else { return "" }
    return UnsafeRawPointer(characters).withMemoryRebound(to: UInt8.self, capacity: length) {
        String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
}
