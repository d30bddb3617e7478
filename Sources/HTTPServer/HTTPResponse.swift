/// What the handler answers. libmicrohttpd adds `Content-Length`, `Date` and `Connection` itself and
/// leaves the body out when answering `HEAD`.
public struct HTTPResponse: Sendable {
    /// The status code; anything outside 200...599 is sent as 500, since a handler cannot meaningfully
    /// send an interim (1xx) answer or an invalid code.
    public var status: Int
    /// Header fields to send. A `Content-Length` here is ignored (the body's length is sent), and a field
    /// that libmicrohttpd refuses (empty, or with CR/LF in it) is dropped rather than sent malformed.
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// True for `later`.
    public private(set) var isLater = false

    /// Not an answer yet: the handler is called again with the same request (`round` one more)
    /// on the same thread, once libmicrohttpd has served the other connections of that thread
    /// that had data ready. A handler may so gather the work of several requests and do it once
    /// — on a store whose reads are round trips, one statement for all of them. Answering
    /// `later` in round `HTTPResponse.maxRounds` is answered 500.
    public static let later: HTTPResponse = {
        var response = HTTPResponse(status: 500)
        response.isLater = true
        return response
    }()

    /// The rounds a request may be put off.
    public static let maxRounds = 2

    public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `text`, encoded as UTF-8, with the given content type.
    public init(status: Int = 200, contentType: String, body text: String, headers: [(String, String)] = []) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: Array(text.utf8))
    }

    /// A response whose body is `bytes`, with the given content type.
    public init(status: Int = 200, contentType: String, body bytes: [UInt8], headers: [(String, String)] = []) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: bytes)
    }
}

/// A request the server refuses before the handler sees it. The caller's `rejectMalformed` renders it,
/// so that every error body has the caller's shape; `status` is the code the server suggests.
public enum HTTPRejection: Error, Sendable {
    /// The request target is longer than `maxRequestTargetBytes` (414).
    case targetTooLong(byteCount: Int)
    /// The header section is larger than `maxHeaderBytes` or has more than `maxHeaderCount` fields (431).
    /// The counts stop growing once a limit is passed.
    case headersTooLarge(byteCount: Int, fieldCount: Int)
    /// The request target cannot be read: invalid percent-encoding, an encoded NUL, invalid UTF-8,
    /// a control character, or a target that is not a path (400). `reason` is a sentence for people.
    case badRequestTarget(reason: String)
    /// `makeContext` threw on this worker thread (503); it is tried again on the thread's next request.
    case contextUnavailable(any Error)

    public var status: Int {
        switch self {
        case .targetTooLong: return 414
        case .headersTooLarge: return 431
        case .badRequestTarget: return 400
        case .contextUnavailable: return 503
        }
    }
}
