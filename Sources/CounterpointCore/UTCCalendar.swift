/// Day and month arithmetic on the proleptic Gregorian calendar in UTC, for the rollups:
/// a day is `hour / 24`, a month is the number of whole months since 1970-01.
///
/// `days(fromCivil:)` and `civil(fromDays:)` are Howard Hinnant's public-domain algorithms
/// ("chrono-Compatible Low-Level Date Algorithms"): exact for every date, no tables, no Foundation.
public enum UTCCalendar {
    /// The day (days since 1970-01-01) containing `hour`.
    @inlinable
    public static func day(of hour: Hour) -> Int64 { Hour.floorDivide(hour.index, 24) }

    /// The month (months since 1970-01) containing `day`.
    public static func month(ofDay day: Int64) -> Int64 {
        let (year, month, _) = civil(fromDays: day)
        return (year - 1970) * 12 + (month - 1)
    }

    /// The first day of `month`.
    public static func firstDay(ofMonth month: Int64) -> Int64 {
        let year = 1970 + Hour.floorDivide(month, 12)
        let monthOfYear = month - Hour.floorDivide(month, 12) * 12 + 1
        return days(fromCivil: year, monthOfYear, 1)
    }

    /// Days since 1970-01-01 of the civil date `year`-`month`-`day`.
    public static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = Hour.floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date (year, month 1…12, day 1…31) of `days` since 1970-01-01.
    public static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = Hour.floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
