/// Where and why a byte sequence stopped being JSON (or UTF-8).
///
/// A plain value, so that throwing it costs no allocation; `EventParser` turns it into an
/// `EventRejection` with a message only once an event has actually failed.
struct SyntaxFault: Error {
    enum Problem: UInt8 {
        case expectedObject, expectedKey, expectedColon, expectedCommaOrBrace, expectedCommaOrBracket
        case expectedValue, trailingCharacters, unterminatedString, controlCharacterInString
        case invalidEscape, loneSurrogate, invalidNumber, invalidLiteral, tooDeep, invalidUTF8
    }

    var problem: Problem
    var offset: Int
    /// `.invalidUTF8` when the offending bytes are not UTF-8, else `.malformedJSON`.
    var reason: RejectReason
}

/// A forward-only reader of JSON tokens over a borrowed byte buffer (RFC 8259 grammar).
///
/// Everything it skips is still fully validated: strings (escapes, surrogate pairs, control
/// characters, UTF-8), numbers (the exact grammar) and nested values up to `maxDepth`.
/// All reads are bounds-checked against `end`; the buffer is never read past it.
struct JSONScanner {
    let base: UnsafeRawPointer
    let end: Int
    var position: Int
    let maxDepth: Int

    @inline(__always)
    init(base: UnsafeRawPointer, count: Int, maxDepth: Int) {
        self.base = base
        self.end = count
        self.position = 0
        self.maxDepth = maxDepth
    }

    @inline(__always)
    func byte(at index: Int) -> UInt8 { base.load(fromByteOffset: index, as: UInt8.self) }

    /// The byte at the cursor, or 0 at the end: NUL is never valid outside a string, so
    /// callers treat both alike, as "not the byte I expected".
    @inline(__always)
    var current: UInt8 { position < end ? byte(at: position) : 0 }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < end {
            let byte = byte(at: position)
            if byte > 0x20 { return }
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position &+= 1
        }
    }

    /// A fault at the cursor: `invalid_utf8` if the bytes there are not UTF-8 at all.
    @inline(never)
    func fault(_ problem: SyntaxFault.Problem) -> SyntaxFault {
        if position < end && byte(at: position) >= 0x80 && utf8SequenceLength(at: position) == nil {
            return SyntaxFault(problem: .invalidUTF8, offset: position, reason: .invalidUTF8)
        }
        return SyntaxFault(problem: problem, offset: position, reason: .malformedJSON)
    }

    // MARK: Strings

    /// Scans a string whose opening quote is just behind the cursor, leaving the cursor just
    /// past the closing quote. Returns whether the string holds escapes (so its raw bytes are
    /// not its value).
    @inline(__always)
    mutating func scanString() throws(SyntaxFault) -> Bool {
        var hasEscapes = false
        while true {
            // Plain printable ASCII, eight bytes at a time.
            while position &+ 8 <= end {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
                let special = JSONScanner.specialStringBytes(word)
                if special == 0 { position &+= 8; continue }
                position &+= special.trailingZeroBitCount >> 3
                break
            }
            guard position < end else { throw fault(.unterminatedString) }
            let byte = byte(at: position)
            if byte == UInt8(ascii: "\"") {
                position &+= 1
                return hasEscapes
            } else if byte == UInt8(ascii: "\\") {
                try scanEscape()
                hasEscapes = true
            } else if byte < 0x20 {
                throw fault(.controlCharacterInString)
            } else if byte >= 0x80 {
                guard let length = utf8SequenceLength(at: position) else {
                    throw SyntaxFault(problem: .invalidUTF8, offset: position, reason: .invalidUTF8)
                }
                position &+= length
            } else {
                position &+= 1
            }
        }
    }

    /// High bit set in each byte lane that holds `"`, `\`, a control character or a
    /// non-ASCII byte. Lanes above the first flagged one may be flagged spuriously (borrows),
    /// so only the lowest flagged lane is meaningful.
    @inline(__always)
    static func specialStringBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let zeroQuote = (quotes &- ones) & ~quotes
        let zeroBackslash = (backslashes &- ones) & ~backslashes
        let controlOrHigh = (word &- ones &* 0x20) | word
        return (zeroQuote | zeroBackslash | controlOrHigh) & highBits
    }

    /// Validates one escape at the cursor (a backslash) and moves past it; a `\u` high
    /// surrogate must be followed by a `\u` low surrogate, and a low one must not stand alone.
    mutating func scanEscape() throws(SyntaxFault) {
        guard position &+ 1 < end else {
            position = end
            throw fault(.unterminatedString)
        }
        switch byte(at: position &+ 1) {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
             UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position &+= 2
        case UInt8(ascii: "u"):
            guard let unit = hexQuad(at: position &+ 2) else { throw fault(.invalidEscape) }
            if unit >= 0xDC00 && unit <= 0xDFFF { throw fault(.loneSurrogate) }
            if unit >= 0xD800 && unit <= 0xDBFF {
                guard position &+ 12 <= end, byte(at: position &+ 6) == UInt8(ascii: "\\"),
                      byte(at: position &+ 7) == UInt8(ascii: "u"),
                      let low = hexQuad(at: position &+ 8), low >= 0xDC00 && low <= 0xDFFF
                else { throw fault(.loneSurrogate) }
                position &+= 12
            } else {
                position &+= 6
            }
        default:
            throw fault(.invalidEscape)
        }
    }

    func hexQuad(at index: Int) -> UInt32? {
        guard index &+ 4 <= end else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = byte(at: index &+ offset)
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// The length of the well-formed UTF-8 sequence (2–4 bytes) starting at `index`, or `nil`
    /// (overlong forms, surrogates, code points above U+10FFFF and truncations are not UTF-8).
    func utf8SequenceLength(at index: Int) -> Int? {
        let lead = byte(at: index)
        let length: Int
        var secondLow: UInt8 = 0x80, secondHigh: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondLow = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondHigh = 0x9F
        case 0xF0: length = 4; secondLow = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondHigh = 0x8F
        default: return nil
        }
        guard index &+ length <= end else { return nil }
        let second = byte(at: index &+ 1)
        guard second >= secondLow && second <= secondHigh else { return nil }
        for offset in 2..<max(length, 2) where byte(at: index &+ offset) & 0xC0 != 0x80 { return nil }
        return length
    }

    // MARK: Numbers

    /// Scans a number at the cursor (a `-` or a digit) by the exact JSON grammar. Returns its
    /// value if it is written as an integer (no fraction, no exponent) that fits in `Int64`,
    /// else `nil`; `-0` is 0.
    @inline(__always)
    mutating func scanNumber() throws(SyntaxFault) -> Int64? {
        let negative = byte(at: position) == UInt8(ascii: "-")
        if negative { position &+= 1 }
        let digitsStart = position
        guard position < end, byte(at: position) &- UInt8(ascii: "0") < 10 else { throw fault(.invalidNumber) }
        var magnitude: UInt64 = 0
        if byte(at: position) == UInt8(ascii: "0") {
            position &+= 1
        } else {
            while position < end {
                let digit = byte(at: position) &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                magnitude = magnitude &* 10 &+ UInt64(digit)
                position &+= 1
            }
        }
        let digitCount = position &- digitsStart
        var isInteger = true
        if position < end && byte(at: position) == UInt8(ascii: ".") {
            position &+= 1
            try scanDigits()
            isInteger = false
        }
        if position < end && byte(at: position) | 0x20 == UInt8(ascii: "e") {
            position &+= 1
            if position < end && (byte(at: position) == UInt8(ascii: "+") || byte(at: position) == UInt8(ascii: "-")) {
                position &+= 1
            }
            try scanDigits()
            isInteger = false
        }
        guard isInteger else { return nil }
        if digitCount > 18 {
            // 19 digits or more may have wrapped around: recount with overflow checks.
            guard let exact = JSONScanner.exactMagnitude(base + digitsStart, count: digitCount) else { return nil }
            magnitude = exact
        }
        if negative {
            return magnitude <= UInt64(Int64.max) ? -Int64(magnitude)
                : (magnitude == UInt64(Int64.max) + 1 ? Int64.min : nil)
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// The usual integer field, read a word at a time: one to seven digits without a leading
    /// zero, then a byte that ends a number (not `.`, `e` or `E`). Moves past it and returns its
    /// value; otherwise moves nowhere and returns `nil`, for `scanNumber` to read.
    @inline(__always)
    mutating func scanShortInteger() -> Int64? {
        guard position &+ 8 <= end else { return nil }
        let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
        // The high nibble of each lane that is not an ASCII digit is set in `notDigit` (lowest lane
        // exact: a carry of the addition starts only in a lane that is not a digit).
        let highNibbles: UInt64 = 0xF0F0_F0F0_F0F0_F0F0, threes: UInt64 = 0x3030_3030_3030_3030
        let notDigit = ((word & highNibbles) ^ threes) | (((word &+ 0x0606_0606_0606_0606) & highNibbles) ^ threes)
        let digits = notDigit.trailingZeroBitCount >> 3
        guard digits >= 1 && digits <= 7, word & 0xFF != UInt64(UInt8(ascii: "0")) || digits == 1 else { return nil }
        let next = UInt8(truncatingIfNeeded: word >> UInt64(8 &* digits))
        guard next != UInt8(ascii: "."), next | 0x20 != UInt8(ascii: "e") else { return nil }
        // The digits in the top lanes, zeros (leading zeros of the number) below them; then pairs,
        // quadruples and the eight lanes summed by multiplication.
        var value = (word & 0x0F0F_0F0F_0F0F_0F0F) << UInt64(8 &* (8 &- digits))
        value = (value &* 2561) >> 8 & 0x00FF_00FF_00FF_00FF
        value = (value &* 6_553_601) >> 16 & 0x0000_FFFF_0000_FFFF
        value = (value &* 42_949_672_960_001) >> 32
        position &+= digits
        return Int64(value)
    }

    /// One or more digits, as a fraction or an exponent needs.
    mutating func scanDigits() throws(SyntaxFault) {
        let start = position
        while position < end && byte(at: position) &- UInt8(ascii: "0") < 10 { position &+= 1 }
        guard position > start else { throw fault(.invalidNumber) }
    }

    static func exactMagnitude(_ digits: UnsafeRawPointer, count: Int) -> UInt64? {
        var value: UInt64 = 0
        for index in 0..<count {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digits.load(fromByteOffset: index, as: UInt8.self) &- 48))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return value
    }

    // MARK: Skipping values

    /// Skips (and validates) any JSON value at the cursor; `depth` is the nesting depth of the
    /// container holding it.
    mutating func skipValue(depth: Int) throws(SyntaxFault) {
        switch current {
        case UInt8(ascii: "\""):
            position &+= 1
            _ = try scanString()
        case UInt8(ascii: "{"):
            try skipContainer(depth: depth &+ 1, isObject: true)
        case UInt8(ascii: "["):
            try skipContainer(depth: depth &+ 1, isObject: false)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
        case UInt8(ascii: "f"):
            try expectLiteral("false")
        case UInt8(ascii: "n"):
            try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try scanNumber()
        default:
            throw fault(.expectedValue)
        }
    }

    /// Skips the object or array whose `{` or `[` is at the cursor: `"key": value` members in
    /// an object, values in an array, separated by commas.
    mutating func skipContainer(depth: Int, isObject: Bool) throws(SyntaxFault) {
        guard depth <= maxDepth else { throw fault(.tooDeep) }
        let closer = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        position &+= 1
        skipWhitespace()
        if current == closer {
            position &+= 1
            return
        }
        while true {
            if isObject {
                guard current == UInt8(ascii: "\"") else { throw fault(.expectedKey) }
                position &+= 1
                _ = try scanString()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw fault(.expectedColon) }
                position &+= 1
                skipWhitespace()
            }
            try skipValue(depth: depth)
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                position &+= 1
                skipWhitespace()
            } else if current == closer {
                position &+= 1
                return
            } else {
                throw fault(isObject ? .expectedCommaOrBrace : .expectedCommaOrBracket)
            }
        }
    }

    /// Matches `true`, `false` or `null` at the cursor.
    @inline(__always)
    mutating func expectLiteral(_ literal: StaticString) throws(SyntaxFault) {
        let length = literal.utf8CodeUnitCount
        guard position &+ length <= end else { throw fault(.invalidLiteral) }
        let bytes = literal.utf8Start
        for index in 0..<length where byte(at: position &+ index) != bytes[index] {
            position &+= index
            throw fault(.invalidLiteral)
        }
        position &+= length
    }

    // MARK: Decoding (only for the rare strings that hold escapes)

    /// The UTF-8 value of a validated string body `[start, stop)` (without its quotes).
    func decodedString(from start: Int, to stop: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(stop - start)
        var index = start
        while index < stop {
            let byte = byte(at: index)
            guard byte == UInt8(ascii: "\\") else {
                result.append(byte)
                index += 1
                continue
            }
            let escape = self.byte(at: index + 1)
            index += 2
            switch escape {
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hexQuad(at: index) ?? 0xFFFD
                index += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    let low = hexQuad(at: index + 2) ?? 0xDC00
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                result.append(contentsOf: Unicode.Scalar(scalar).map { Array(String($0).utf8) } ?? [0xEF, 0xBF, 0xBD])
            default: result.append(escape) // `"`, `\` and `/` stand for themselves
            }
        }
        return result
    }
}
