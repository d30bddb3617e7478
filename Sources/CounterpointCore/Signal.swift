/// What is counted per (subject, hour) (SPEC §11): each signal is the net sum of its events'
/// weights. The cases are the model's data — their names are the API's `signal=` values and
/// the JSON keys of counts; adding a signal starts here.
public enum Signal: String, Sendable, CaseIterable, Hashable {
    case plays, downloads, likes, reposts, comments
}

/// The `type` of an event (SPEC §1, §11): which signal it counts for and with what weight. A
/// retraction (`unlike`, `unrepost`, `comment_deleted`) is an event of its own that weighs −1.
public enum EventType: UInt8, Sendable, CaseIterable, Hashable {
    case play, download, like, unlike, repost, unrepost, comment, commentDeleted

    /// The `type` string of the event format.
    public var name: String { nameBytes.description }

    /// The same as static bytes, for writers that copy it without a `String` (the generator).
    public var nameBytes: StaticString {
        switch self {
        case .play: "play"
        case .download: "download"
        case .like: "like"
        case .unlike: "unlike"
        case .repost: "repost"
        case .unrepost: "unrepost"
        case .comment: "comment"
        case .commentDeleted: "comment_deleted"
        }
    }

    public var signal: Signal {
        switch self {
        case .play: .plays
        case .download: .downloads
        case .like, .unlike: .likes
        case .repost, .unrepost: .reposts
        case .comment, .commentDeleted: .comments
        }
    }

    /// +1, or −1 for a retraction.
    public var weight: Int64 {
        switch self {
        case .unlike, .unrepost, .commentDeleted: -1
        default: 1
        }
    }

    /// The type named by `bytes` (a decoded `type` string), if any.
    static func named(_ bytes: some Collection<UInt8>) -> EventType? {
        allCases.first { $0.name.utf8.elementsEqual(bytes) }
    }
}

extension Signal {
    /// The signal's place in `allCases` (and in `SignalCounts`), 0 for plays.
    @inlinable
    public var ordinal: Int {
        switch self {
        case .plays: 0
        case .downloads: 1
        case .likes: 2
        case .reposts: 3
        case .comments: 4
        }
    }

    /// The signal named by a query value (`signal=likes`), if any.
    public init?(named name: some StringProtocol) {
        guard let signal = Signal(rawValue: String(name)) else { return nil }
        self = signal
    }
}

/// Every signal's net count of one (subject, bucket): the row a counter write carries and an
/// answer's totals are made of. Plays are never negative; the signals with retractions can be.
public struct SignalCounts: Hashable, Sendable {
    public var plays: Int64 = 0
    public var downloads: Int64 = 0
    public var likes: Int64 = 0
    public var reposts: Int64 = 0
    public var comments: Int64 = 0

    @inlinable
    public init() {}

    @inlinable
    public init(plays: Int64) { self.plays = plays }

    public static let zero = SignalCounts()

    @inlinable
    public subscript(signal: Signal) -> Int64 {
        get {
            switch signal {
            case .plays: plays
            case .downloads: downloads
            case .likes: likes
            case .reposts: reposts
            case .comments: comments
            }
        }
        set {
            switch signal {
            case .plays: plays = newValue
            case .downloads: downloads = newValue
            case .likes: likes = newValue
            case .reposts: reposts = newValue
            case .comments: comments = newValue
            }
        }
    }

    /// Whether every signal is 0.
    @inlinable
    public var isZero: Bool { plays == 0 && downloads == 0 && likes == 0 && reposts == 0 && comments == 0 }

    /// Adds `sign` × `other`, signal by signal.
    @inlinable
    public mutating func add(_ other: SignalCounts, sign: Int64 = 1) {
        plays += sign * other.plays
        downloads += sign * other.downloads
        likes += sign * other.likes
        reposts += sign * other.reposts
        comments += sign * other.comments
    }

    @inlinable
    public static func + (a: SignalCounts, b: SignalCounts) -> SignalCounts {
        var sum = a
        sum.add(b)
        return sum
    }
}
