/// The state of parsing one event: a scanner plus what each known field turned out to be.
///
/// Field faults are only noted while scanning (one bit per field), because the rest of the
/// document must still be checked as JSON before a field can be blamed.
struct EventParsing {
    var scanner: JSONScanner
    /// Fields seen with a non-null value (the last occurrence of a key wins).
    var present: UInt16 = 0
    var invalid: UInt16 = 0
    var null: UInt16 = 0
    /// Where the body of an unsupported `type` string is, for the message.
    var unsupportedType: Range<Int>?
    var eventID = EventID(words: (0, 0, 0, 0, 0, 0, 0, 0), length: 0)
    var type = EventType.play
    var trackID: Int64 = 0
    /// 0 unless a valid `creator_id` is present.
    var creatorID: Int64 = 0
    var occurredAt: Int64 = 0
    var position: Int64 = 0
    var duration: Int64 = 0
    var listenerID: Int64 = 0
    var client = DimensionValue()
    var country = DimensionValue()
    /// Whether the shortcuts for the usual shape of an event are tried before the general path
    /// (always, but for the tests that compare the two).
    let fastPaths: Bool

    @inline(__always)
    init(base: UnsafeRawPointer, count: Int, fastPaths: Bool) {
        scanner = JSONScanner(base: base, count: count, maxDepth: EventParser.maxNestingDepth)
        self.fastPaths = fastPaths
    }

    mutating func run() -> Result<Event, EventRejection> {
        scanner.skipWhitespace()
        if scanner.position == scanner.end { return .failure(EventParser.emptyRejection) }
        do {
            try scanEvent()
        } catch {
            return .failure(rejection(for: error))
        }
        if unsupportedType != nil || invalid != 0 || present & EventField.requiredMask != EventField.requiredMask {
            return .failure(fieldRejection())
        }
        return .success(Event(eventID: eventID, type: type, trackID: trackID,
                              creatorID: present & EventField.creatorID.bit != 0 ? creatorID : 0,
                              occurredAtMilliseconds: occurredAt))
    }

    /// The dimensions of a valid event: only fields present with a valid value (the last
    /// occurrence of a key wins, so a later `null` clears an earlier value).
    @inline(__always)
    var dimensions: PlayDimensions {
        let waveform = EventField.positionMilliseconds.bit | EventField.durationMilliseconds.bit
        var dimensions = PlayDimensions()
        if present & waveform == waveform,
           let bucket = WaveformBucket.of(positionMilliseconds: position, durationMilliseconds: duration) {
            dimensions.waveformBucket = Int8(bucket)
        }
        if present & EventField.client.bit != 0 { dimensions.client = client }
        if present & EventField.country.bit != 0 { dimensions.country = country }
        if present & EventField.listenerID.bit != 0 { dimensions.listenerID = listenerID }
        return dimensions
    }

    // MARK: The object

    @inline(__always)
    mutating func scanEvent() throws(SyntaxFault) {
        guard scanner.current == UInt8(ascii: "{") else { throw scanner.fault(.expectedObject) }
        scanner.position &+= 1
        scanner.skipWhitespace()
        if scanner.current == UInt8(ascii: "}") {
            scanner.position &+= 1
        } else {
            try scanMembers()
        }
        scanner.skipWhitespace()
        guard scanner.position == scanner.end else { throw scanner.fault(.trailingCharacters) }
    }

    @inline(__always)
    mutating func scanMembers() throws(SyntaxFault) {
        // The field whose key is tried first: the usual successor of the last one seen.
        var expected = EventField.eventID
        while true {
            let field: EventField?
            if fastPaths && matchesKey(expected) {
                field = expected
            } else {
                guard scanner.current == UInt8(ascii: "\"") else { throw scanner.fault(.expectedKey) }
                scanner.position &+= 1
                let keyStart = scanner.position
                let keyHasEscapes = try scanner.scanString()
                let keyLength = scanner.position &- 1 &- keyStart
                field = keyHasEscapes
                    ? escapedKeyField(from: keyStart, to: keyStart &+ keyLength)
                    : EventField.matching(scanner.base + keyStart, length: keyLength)
                scanner.skipWhitespace()
                guard scanner.current == UInt8(ascii: ":") else { throw scanner.fault(.expectedColon) }
                scanner.position &+= 1
            }
            scanner.skipWhitespace()
            if let field {
                expected = field.usualSuccessor
                try scanValue(of: field)
            } else {
                try scanner.skipValue(depth: 1)
            }
            scanner.skipWhitespace()
            let delimiter = scanner.current
            scanner.position &+= 1
            if delimiter == UInt8(ascii: ",") {
                scanner.skipWhitespace()
            } else if delimiter == UInt8(ascii: "}") {
                return
            } else {
                scanner.position &-= 1
                throw scanner.fault(.expectedCommaOrBrace)
            }
        }
    }

    /// Whether the bytes at the cursor are exactly `"name":` for `field` (a key without escapes
    /// or whitespace, as producers write them): if so, moves past them. The same member as the
    /// general path would read, in a few word compares.
    @inline(__always)
    mutating func matchesKey(_ field: EventField) -> Bool {
        let pattern = field.keyPattern
        guard scanner.position &+ pattern.length <= scanner.end else { return false }
        let start = scanner.base + scanner.position
        let matches = pattern.length >= 8
            ? UInt64(littleEndian: start.loadUnaligned(as: UInt64.self)) == pattern.head
                && UInt64(littleEndian: start.loadUnaligned(fromByteOffset: pattern.length &- 8, as: UInt64.self)) == pattern.tail
            : UInt64(UInt32(littleEndian: start.loadUnaligned(as: UInt32.self))) == pattern.head
                && UInt64(UInt32(littleEndian: start.loadUnaligned(fromByteOffset: pattern.length &- 4, as: UInt32.self))) == pattern.tail
        if matches { scanner.position &+= pattern.length }
        return matches
    }

    func escapedKeyField(from start: Int, to stop: Int) -> EventField? {
        let key = scanner.decodedString(from: start, to: stop)
        // The longest known key has 11 bytes; matching reads up to 11 bytes.
        guard key.count <= 11 else { return nil }
        return key.withUnsafeBytes { EventField.matching($0.baseAddress!, length: key.count) }
    }

    // MARK: Known fields

    enum Outcome { case valid, invalid, null }

    @inline(__always)
    mutating func note(_ field: EventField, _ outcome: Outcome) {
        let bit = field.bit
        present &= ~bit
        invalid &= ~bit
        null &= ~bit
        switch outcome {
        case .valid: present |= bit
        case .invalid: present |= bit; invalid |= bit
        case .null: null |= bit
        }
    }

    @inline(__always)
    mutating func scanValue(of field: EventField) throws(SyntaxFault) {
        if scanner.current == UInt8(ascii: "n") {
            try scanner.expectLiteral("null")
            note(field, .null)
            if field == .type { unsupportedType = nil }
            return
        }
        switch field {
        case .eventID: try scanEventID()
        case .type: try scanType()
        case .trackID:
            let value = try scanInteger(field)
            if let value, value >= 1 && value <= EventLimits.maxTrackID { trackID = value } else { note(field, .invalid) }
        case .occurredAt: try scanOccurredAt()
        case .listenerID:
            if let value = try scanInteger(field) {
                if value < 0 { note(field, .invalid) } else { listenerID = value }
            }
        case .positionMilliseconds:
            if let value = try scanInteger(field) {
                if value < 0 { note(field, .invalid) } else { position = value }
            }
        case .durationMilliseconds:
            if let value = try scanInteger(field) {
                if value <= 0 { note(field, .invalid) } else { duration = value }
            }
        case .client, .country: try scanShortString(field)
        case .creatorID:
            let value = try scanInteger(field)
            if let value, value >= 1 && value <= EventLimits.maxCreatorID { creatorID = value } else { note(field, .invalid) }
        }
    }

    /// Scans a value that must be an integer: notes the field valid and returns the value, or
    /// notes it invalid (any other value, skipped) and returns `nil`.
    @inline(__always)
    mutating func scanInteger(_ field: EventField) throws(SyntaxFault) -> Int64? {
        if fastPaths, let value = scanner.scanShortInteger() {
            note(field, .valid)
            return value
        }
        let first = scanner.current
        if first == UInt8(ascii: "-") || first &- UInt8(ascii: "0") < 10 {
            if let value = try scanner.scanNumber() {
                note(field, .valid)
                return value
            }
        } else {
            try scanner.skipValue(depth: 1)
        }
        note(field, .invalid)
        return nil
    }

    /// Scans a value that must be a string: returns its body's bounds and whether it holds
    /// escapes, or skips any other value and returns `nil`.
    @inline(__always)
    mutating func scanStringValue() throws(SyntaxFault) -> (start: Int, stop: Int, hasEscapes: Bool)? {
        guard scanner.current == UInt8(ascii: "\"") else {
            try scanner.skipValue(depth: 1)
            return nil
        }
        scanner.position &+= 1
        let start = scanner.position
        let hasEscapes = try scanner.scanString()
        return (start, scanner.position &- 1, hasEscapes)
    }

    @inline(__always)
    mutating func scanEventID() throws(SyntaxFault) {
        // Usually a run of allowed bytes and a closing quote: then that run is the whole string
        // (no allowed byte needs escaping in JSON) and a valid id, found in one pass.
        if fastPaths && scanner.current == UInt8(ascii: "\"") {
            let start = scanner.position &+ 1
            let limit = min(scanner.end, start &+ EventID.maxLength &+ 1)
            var index = start
            while index < limit && EventID.isAllowed(scanner.byte(at: index)) { index &+= 1 }
            if index < limit && index > start && scanner.byte(at: index) == UInt8(ascii: "\"") {
                eventID = EventID(copying: scanner.base + start, count: index &- start)
                scanner.position = index &+ 1
                return note(.eventID, .valid)
            }
        }
        guard let string = try scanStringValue() else { return note(.eventID, .invalid) }
        let id = string.hasEscapes
            ? scanner.decodedString(from: string.start, to: string.stop).withUnsafeBytes { EventID(validating: $0) }
            : EventID(validating: scanner.base + string.start, count: string.stop &- string.start)
        if let id {
            eventID = id
            note(.eventID, .valid)
        } else {
            note(.eventID, .invalid)
        }
    }

    @inline(__always)
    mutating func scanType() throws(SyntaxFault) {
        unsupportedType = nil
        // `"play"`, quotes included, as the little-endian bytes of two overlapping words.
        if fastPaths && scanner.position &+ 6 <= scanner.end
            && scanner.base.loadUnaligned(fromByteOffset: scanner.position, as: UInt32.self) == UInt32(littleEndian: 0x616C_7022)
            && scanner.base.loadUnaligned(fromByteOffset: scanner.position &+ 2, as: UInt32.self) == UInt32(littleEndian: 0x2279_616C) {
            scanner.position &+= 6
            type = .play
            return note(.type, .valid)
        }
        guard let string = try scanStringValue() else { return note(.type, .invalid) }
        note(.type, .valid)
        let named = string.hasEscapes
            ? EventType.named(scanner.decodedString(from: string.start, to: string.stop))
            : EventType.named(UnsafeRawBufferPointer(start: scanner.base + string.start, count: string.stop &- string.start))
        if let named {
            type = named
        } else {
            unsupportedType = string.start..<string.stop
        }
    }

    @inline(__always)
    mutating func scanOccurredAt() throws(SyntaxFault) {
        let milliseconds: Int64?
        if scanner.current == UInt8(ascii: "\"") {
            guard let string = try scanStringValue() else { return }
            if string.hasEscapes {
                milliseconds = scanner.decodedString(from: string.start, to: string.stop)
                    .withUnsafeBytes { UTCTime.parseTimestamp($0) }
            } else {
                milliseconds = UTCTime.parseTimestamp(
                    (scanner.base + string.start).assumingMemoryBound(to: UInt8.self), count: string.stop &- string.start)
            }
        } else {
            milliseconds = try scanInteger(.occurredAt)
        }
        if let milliseconds, milliseconds >= EventLimits.earliestMilliseconds && milliseconds < EventLimits.latestMilliseconds {
            occurredAt = milliseconds
            note(.occurredAt, .valid)
        } else {
            note(.occurredAt, .invalid)
        }
    }

    @inline(__always)
    mutating func scanShortString(_ field: EventField) throws(SyntaxFault) {
        // Usually a few plain ASCII bytes and the closing quote within the next word: then the
        // value is that word's lanes before the quote.
        if fastPaths && scanner.current == UInt8(ascii: "\"") && scanner.position &+ 9 <= scanner.end {
            let word = UInt64(littleEndian: scanner.base.loadUnaligned(fromByteOffset: scanner.position &+ 1, as: UInt64.self))
            let special = JSONScanner.specialStringBytes(word)
            let length = special.trailingZeroBitCount >> 3
            if special != 0 && scanner.byte(at: scanner.position &+ 1 &+ length) == UInt8(ascii: "\"") {
                scanner.position &+= length &+ 2
                return keep(DimensionValue(lowBytesOf: word, count: length), as: field)
            }
        }
        guard let string = try scanStringValue() else { return note(field, .invalid) }
        let value: DimensionValue?
        if string.hasEscapes {
            // Escaped strings are rare; only they pay for decoding into a buffer.
            let decoded = scanner.decodedString(from: string.start, to: string.stop)
            value = decoded.count <= DimensionValue.maxLength
                ? decoded.withUnsafeBytes { DimensionValue(copying: $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: $0.count) }
                : nil
        } else {
            let length = string.stop &- string.start
            value = length <= DimensionValue.maxLength ? DimensionValue(copying: scanner.base + string.start, count: length) : nil
        }
        guard let value else { return note(field, .invalid) }
        keep(value, as: field)
    }

    /// A valid `client` or `country` value.
    @inline(__always)
    mutating func keep(_ value: DimensionValue, as field: EventField) {
        if field == .client { client = value } else { country = value }
        note(field, .valid)
    }

    // MARK: Rejections (built only for failed events)

    func rejection(for fault: SyntaxFault) -> EventRejection {
        let what: String
        switch fault.problem {
        case .expectedObject: what = "an event must be a JSON object"
        case .expectedKey: what = "expected a string key"
        case .expectedColon: what = "expected ':' after an object key"
        case .expectedCommaOrBrace: what = "expected ',' or '}' in an object"
        case .expectedCommaOrBracket: what = "expected ',' or ']' in an array"
        case .expectedValue: what = "expected a JSON value"
        case .trailingCharacters: what = "unexpected characters after the event object"
        case .unterminatedString: what = "unterminated string"
        case .controlCharacterInString: what = "unescaped control character in a string"
        case .invalidEscape: what = "invalid escape sequence in a string"
        case .loneSurrogate: what = "unpaired UTF-16 surrogate in a \\u escape"
        case .invalidNumber: what = "invalid number"
        case .invalidLiteral: what = "invalid literal (expected true, false or null)"
        case .tooDeep: what = "values nested deeper than \(EventParser.maxNestingDepth) levels"
        case .invalidUTF8: what = "bytes that are not valid UTF-8"
        }
        let place = fault.offset >= scanner.end ? "at the end of the input" : "at byte \(fault.offset)"
        let kind = fault.reason == .invalidUTF8 ? "invalid UTF-8" : "malformed JSON"
        return EventRejection(reason: fault.reason, message: "\(kind) \(place): \(what)")
    }

    func fieldRejection() -> EventRejection {
        if let range = unsupportedType {
            let value = scanner.decodedString(from: range.lowerBound, to: range.upperBound)
            let shown = String(decoding: value.prefix(64), as: UTF8.self)
            return EventRejection(reason: .unsupportedType, field: EventField.type.name,
                                  message: "event type \"\(shown)\" is not supported (the types are " +
                                      EventType.allCases.map(\.name).joined(separator: ", ") + ")")
        }
        if invalid != 0, let field = EventField(rawValue: invalid.trailingZeroBitCount) {
            return EventRejection(reason: .invalidField, field: field.name, message: field.rule)
        }
        let missing = EventField.requiredMask & ~present
        let field = EventField(rawValue: missing.trailingZeroBitCount) ?? .eventID
        let state = null & field.bit != 0 ? "is null" : "is missing"
        return EventRejection(reason: .missingField, field: field.name, message: "required field \(field.name) \(state)")
    }
}
