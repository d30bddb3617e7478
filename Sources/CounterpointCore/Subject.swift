/// Whose counts a row holds (SPEC §11): every valid event counts for its track, and an event
/// that names a creator (`creator_id`) counts for that creator as well. Like `Signal`, the kinds
/// are the model's data: the store names each kind's tables after it (`Catalogue`), the reader
/// its routes, and nothing else spells a kind out.
public enum SubjectKind: Int, Sendable, CaseIterable, Hashable {
    case track, creator

    /// The id's field in events, answers and CSV headers, and the key column of the kind's
    /// tables: `track_id`, `creator_id`.
    public var idField: String {
        switch self {
        case .track: "track_id"
        case .creator: "creator_id"
        }
    }

    /// The kind's path segment and list key: `tracks`, `creators`.
    public var plural: String {
        switch self {
        case .track: "tracks"
        case .creator: "creators"
        }
    }
}

/// One subject: a track or a creator, by id.
public struct Subject: Sendable, Hashable, CustomStringConvertible {
    public var kind: SubjectKind
    public var id: Int64

    public init(_ kind: SubjectKind, _ id: Int64) {
        self.kind = kind
        self.id = id
    }

    public static func track(_ id: Int64) -> Subject { Subject(.track, id) }
    public static func creator(_ id: Int64) -> Subject { Subject(.creator, id) }

    /// "track 42", "creator 7".
    public var description: String { "\(kind) \(id)" }
}
