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
    public var name: String {
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

extension EventRejection {
    /// An event of a valid type (SPEC §11) that this version does not count yet: only plays
    /// are counted until the other signals reach the stores. Counted as `unsupported_type` and
    /// sampled like any rejection, so that nothing is dropped unseen; the archiver keeps
    /// every valid event, so a later batch over the logs counts these.
    public static func notCountedYet(_ type: EventType) -> EventRejection {
        EventRejection(reason: .unsupportedType, field: "type",
                       message: "event type \"\(type.name)\" is valid but not counted yet: this version counts plays only")
    }
}
