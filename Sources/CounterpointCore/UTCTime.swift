/// Conversions between epoch time and RFC 3339 UTC text, without Foundation's formatters:
/// they sit on the hot paths of the batch job (parsing) and the reader (formatting).
public enum UTCTime {
    /// Days from 1970-01-01 to the civil date (proleptic Gregorian), after Howard Hinnant's
    /// `days_from_civil`, which is exact for every date we accept.
    @inlinable
    public static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since 1970-01-01 (inverse of `daysFromCivil`).
    @inlinable
    public static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    @inlinable
    public static func isLeapYear(_ year: Int64) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    @inlinable
    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `2026-11-20T12:00:00Z` for whole seconds.
    public static func format(epochSeconds: Int64) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(20)
        append(epochSeconds: epochSeconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `2026-11-20T12:34:56.789Z` for milliseconds.
    public static func format(epochMilliseconds: Int64) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        append(epochMilliseconds: epochMilliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `format(epochMilliseconds:)`'s bytes, without making a string.
    public static func append(epochMilliseconds: Int64, to bytes: inout [UInt8]) {
        let seconds = Hour.floorDivide(epochMilliseconds, 1000)
        let millis = epochMilliseconds - seconds * 1000
        append(epochSeconds: seconds, to: &bytes)
        bytes.removeLast() // the "Z"
        bytes.append(UInt8(ascii: "."))
        appendDigits(millis, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Appends `YYYY-MM-DDTHH:MM:SSZ` to a byte buffer (used by JSON writers).
    public static func append(epochSeconds: Int64, to bytes: inout [UInt8]) {
        let days = Hour.floorDivide(epochSeconds, 86_400)
        let secondOfDay = epochSeconds - days * 86_400
        let date = civilFromDays(days)
        appendDigits(date.year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(date.month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(date.day, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    static func appendDigits(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
