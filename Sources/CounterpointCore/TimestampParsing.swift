extension UTCTime {
    /// Parses an RFC 3339 UTC timestamp into epoch milliseconds.
    ///
    /// Accepted: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of one or more digits (truncated,
    /// not rounded, to milliseconds), then `Z` or `+00:00`. `T` and `Z` may be lower case, as
    /// RFC 3339 §5.6 allows. Rejected: every other offset (including `-00:00`, which RFC 3339
    /// reserves for "offset unknown"), dates that do not exist (February 30, February 29 of a
    /// common year), hour 24, leap seconds (`:60`: the events' clocks are POSIX clocks, which
    /// never show one) and any surrounding whitespace. Years 0000–9999 parse; callers apply
    /// their own range (events accept 2000-01-01 ≤ t < 2100-01-01).
    public static func parseTimestamp(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard let base = bytes.baseAddress else { return nil }
        return parseTimestamp(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    }

    /// Parses an RFC 3339 UTC timestamp (see the byte overload for the exact grammar).
    public static func parseTimestamp(_ text: String) -> Int64? {
        var copy = text
        return copy.withUTF8 { parseTimestamp(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    static func parseTimestamp(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int64? {
        // The shortest form is "2026-11-20T12:34:56Z".
        guard count >= 20 else { return nil }
        @inline(__always) func digit(_ index: Int) -> Int64 { Int64(bytes[index] &- UInt8(ascii: "0")) }
        @inline(__always) func isDigit(_ index: Int) -> Bool { bytes[index] &- UInt8(ascii: "0") < 10 }

        // Every fixed position is checked before any arithmetic, with one branch at the end.
        var wellFormed = isDigit(0) && isDigit(1) && isDigit(2) && isDigit(3)
        wellFormed = wellFormed && bytes[4] == UInt8(ascii: "-") && isDigit(5) && isDigit(6)
        wellFormed = wellFormed && bytes[7] == UInt8(ascii: "-") && isDigit(8) && isDigit(9)
        wellFormed = wellFormed && (bytes[10] | 0x20) == UInt8(ascii: "t")
        wellFormed = wellFormed && isDigit(11) && isDigit(12) && bytes[13] == UInt8(ascii: ":")
        wellFormed = wellFormed && isDigit(14) && isDigit(15) && bytes[16] == UInt8(ascii: ":")
        wellFormed = wellFormed && isDigit(17) && isDigit(18)
        guard wellFormed else { return nil }

        let year = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3)
        let month = digit(5) * 10 + digit(6)
        let day = digit(8) * 10 + digit(9)
        let hour = digit(11) * 10 + digit(12)
        let minute = digit(14) * 10 + digit(15)
        let second = digit(17) * 10 + digit(18)
        guard month >= 1 && month <= 12, day >= 1, day <= daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 59 else { return nil }

        var index = 19
        var milliseconds: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < count && isDigit(index) {
                if index - fractionStart < 3 { milliseconds = milliseconds * 10 + digit(index) }
                index += 1
            }
            let fractionDigits = index - fractionStart
            guard fractionDigits > 0 else { return nil }
            if fractionDigits == 1 { milliseconds *= 100 } else if fractionDigits == 2 { milliseconds *= 10 }
        }

        let remaining = count - index
        if remaining == 1 {
            guard (bytes[index] | 0x20) == UInt8(ascii: "z") else { return nil }
        } else if remaining == 6 {
            guard bytes[index] == UInt8(ascii: "+"), bytes[index + 1] == UInt8(ascii: "0"),
                  bytes[index + 2] == UInt8(ascii: "0"), bytes[index + 3] == UInt8(ascii: ":"),
                  bytes[index + 4] == UInt8(ascii: "0"), bytes[index + 5] == UInt8(ascii: "0") else { return nil }
        } else {
            return nil
        }

        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + milliseconds
    }
}
