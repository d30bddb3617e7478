/// The fields of docs/event-format.md that the parser knows, in the order in which their faults are
/// reported.
enum EventField: Int, CaseIterable {
    case eventID, type, trackID, occurredAt, listenerID, positionMilliseconds, durationMilliseconds, client, country, creatorID

    static let requiredMask: UInt16 = 0b1111

    @inline(__always)
    var bit: UInt16 { 1 << UInt16(rawValue) }

    var name: String {
        switch self {
        case .eventID: "event_id"
        case .type: "type"
        case .trackID: "track_id"
        case .occurredAt: "occurred_at"
        case .listenerID: "listener_id"
        case .positionMilliseconds: "position_ms"
        case .durationMilliseconds: "duration_ms"
        case .client: "client"
        case .country: "country"
        case .creatorID: "creator_id"
        }
    }

    /// The rule, as the message of an `invalid_field` rejection.
    var rule: String {
        switch self {
        case .eventID: "event_id must be a string of 1 to 64 characters from [A-Za-z0-9_-]"
        case .type: "type must be a string"
        case .trackID: "track_id must be an integer between 1 and \(EventLimits.maxTrackID)"
        case .occurredAt:
            "occurred_at must be an RFC 3339 UTC timestamp (Z or +00:00) or integer epoch milliseconds, "
                + "from 2000-01-01T00:00:00Z up to 2100-01-01T00:00:00Z (exclusive)"
        case .listenerID: "listener_id must be an integer >= 0"
        case .positionMilliseconds: "position_ms must be an integer >= 0"
        case .durationMilliseconds: "duration_ms must be an integer > 0"
        case .client: "client must be a string of at most 32 bytes"
        case .country: "country must be a string of at most 32 bytes"
        case .creatorID: "creator_id must be an integer between 1 and \(EventLimits.maxCreatorID)"
        }
    }

    /// The field that producers usually write after this one: the order of docs/event-format.md's
    /// example, which the parser tries first (`EventParsing.matchesKey`).
    @inline(__always)
    var usualSuccessor: EventField {
        switch self {
        case .eventID: .type
        case .type: .trackID
        case .trackID: .listenerID
        case .listenerID: .occurredAt
        case .occurredAt: .positionMilliseconds
        case .positionMilliseconds: .durationMilliseconds
        case .durationMilliseconds: .client
        case .client: .country
        // Written last where a producer has it (the generator does): tried only after
        // `country`, so that events without it never pay for a failed first try.
        case .country: .creatorID
        case .creatorID: .eventID
        }
    }

    /// The member's opening bytes, `"name":`, as the little-endian words at its start and at its
    /// end (overlapping: 8-byte words for names of 6 bytes or more, 4-byte ones for `type`).
    struct KeyPattern: Equatable {
        var length: Int
        var head: UInt64
        var tail: UInt64
    }

    /// This field's pattern: constants, so that the parser's first try per member costs no
    /// look-up of a lazily made table (a `static let` array cost a `swift_once` check per
    /// member). `EventFieldRuleTests` derives every one from `name`.
    @inline(__always)
    var keyPattern: KeyPattern {
        switch self {
        case .eventID: KeyPattern(length: 11, head: 0x695F_746E_6576_6522, tail: 0x3A22_6469_5F74_6E65) // "event_id":
        case .type: KeyPattern(length: 7, head: 0x7079_7422, tail: 0x3A22_6570) // "type":
        case .trackID: KeyPattern(length: 11, head: 0x695F_6B63_6172_7422, tail: 0x3A22_6469_5F6B_6361) // "track_id":
        case .occurredAt: KeyPattern(length: 14, head: 0x6572_7275_6363_6F22, tail: 0x3A22_7461_5F64_6572) // "occurred_at":
        case .listenerID: KeyPattern(length: 14, head: 0x656E_6574_7369_6C22, tail: 0x3A22_6469_5F72_656E) // "listener_id":
        case .positionMilliseconds:
            KeyPattern(length: 14, head: 0x6F69_7469_736F_7022, tail: 0x3A22_736D_5F6E_6F69) // "position_ms":
        case .durationMilliseconds:
            KeyPattern(length: 14, head: 0x6F69_7461_7275_6422, tail: 0x3A22_736D_5F6E_6F69) // "duration_ms":
        case .client: KeyPattern(length: 9, head: 0x2274_6E65_696C_6322, tail: 0x3A22_746E_6569_6C63) // "client":
        case .country: KeyPattern(length: 10, head: 0x7972_746E_756F_6322, tail: 0x3A22_7972_746E_756F) // "country":
        case .creatorID: KeyPattern(length: 13, head: 0x726F_7461_6572_6322, tail: 0x3A22_6469_5F72_6F74) // "creator_id":
        }
    }

    /// The field named by the key bytes, compared a few words at a time.
    @inline(__always)
    static func matching(_ key: UnsafeRawPointer, length: Int) -> EventField? {
        @inline(__always) func word64(_ offset: Int) -> UInt64 {
            UInt64(littleEndian: key.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        @inline(__always) func word32(_ offset: Int) -> UInt32 {
            UInt32(littleEndian: key.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }
        // Constants are the key bytes read as little-endian words.
        switch length {
        case 4:
            return word32(0) == 0x6570_7974 ? .type : nil // "type"
        case 6:
            return word32(0) == 0x6569_6C63 && word32(2) == 0x746E_6569 ? .client : nil // "clie", "ient"
        case 7:
            return word32(0) == 0x6E75_6F63 && word32(3) == 0x7972_746E ? .country : nil // "coun", "ntry"
        case 8:
            switch word64(0) {
            case 0x6469_5F74_6E65_7665: return .eventID // "event_id"
            case 0x6469_5F6B_6361_7274: return .trackID // "track_id"
            default: return nil
            }
        case 10:
            return word64(0) == 0x5F72_6F74_6165_7263 && word32(6) == 0x6469_5F72 ? .creatorID : nil // "creator_", "r_id"
        case 11:
            let head = word64(0), tail = word32(7)
            switch (head, tail) {
            case (0x6465_7272_7563_636F, 0x7461_5F64): return .occurredAt // "occurre", "d_at"
            case (0x7265_6E65_7473_696C, 0x6469_5F72): return .listenerID // "listener", "r_id"
            case (0x6E6F_6974_6973_6F70, 0x736D_5F6E): return .positionMilliseconds // "position", "n_ms"
            case (0x6E6F_6974_6172_7564, 0x736D_5F6E): return .durationMilliseconds // "duration", "n_ms"
            default: return nil
            }
        default:
            return nil
        }
    }
}
