/// One request as the handler sees it: its target already split, percent-decoded and validated.
/// The body, if the client sent one, is read and discarded before the handler runs.
public struct HTTPRequest: Sendable {
    /// The method token exactly as sent (`GET`, `HEAD`, or anything else: the handler decides).
    public var method: String
    /// The path, percent-decoded once (`%2541` becomes `%41`; `%2F` becomes `/`), valid UTF-8 without NUL.
    /// Dot segments are not resolved: `/a/../b` reaches the handler as is.
    public var path: String
    /// The request target exactly as received, query included.
    public var rawTarget: String
    /// The query parameters in the order sent, duplicates kept, names and values percent-decoded with
    /// `+` read as a space; `?a` and `?a=` both give `a` the value `""`.
    public var query: [(name: String, value: String)]
    /// The header fields in the order received, names as sent.
    public var headers: [(name: String, value: String)]
    /// How many times the handler answered this request `HTTPResponse.later` before: 0 on the
    /// first call.
    public var round: Int
    /// When the server first took the complete request up, the same in every round: a request
    /// answered later is timed from here, not from the round that answers it.
    public var receivedAt: ContinuousClock.Instant

    public init(
        method: String,
        path: String,
        rawTarget: String,
        query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [],
        round: Int = 0,
        receivedAt: ContinuousClock.Instant = .now
    ) {
        self.method = method
        self.path = path
        self.rawTarget = rawTarget
        self.query = query
        self.headers = headers
        self.round = round
        self.receivedAt = receivedAt
    }

    /// The value of the first header with this name, compared without regard to ASCII case.
    public func header(_ name: String) -> String? {
        headers.first { equalIgnoringASCIICase($0.name, name) }?.value
    }

    /// The values of every query parameter with this name, in order.
    public func queryValues(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }
}

func equalIgnoringASCIICase(_ left: String, _ right: String) -> Bool {
    var leftBytes = left.utf8.makeIterator()
    var rightBytes = right.utf8.makeIterator()
    while true {
        switch (leftBytes.next(), rightBytes.next()) {
        case (nil, nil):
            return true
        case let (l?, r?) where asciiLowercased(l) == asciiLowercased(r):
            continue
        default:
            return false
        }
    }
}

private func asciiLowercased(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
}
