/// Day and month keys of the rollups on the proleptic Gregorian calendar in UTC: a day is
/// `hour / 24`, a month is the number of whole months since 1970-01. The civil-date
/// conversions are `UTCTime`'s.
public enum UTCCalendar {
    /// The day (days since 1970-01-01) containing `hour`.
    @inlinable
    public static func day(of hour: Hour) -> Int64 { Hour.floorDivide(hour.index, 24) }

    /// The month (months since 1970-01) containing `day`.
    public static func month(ofDay day: Int64) -> Int64 {
        let (year, month, _) = UTCTime.civilFromDays(day)
        return (year - 1970) * 12 + (month - 1)
    }

    /// The first day of `month`.
    public static func firstDay(ofMonth month: Int64) -> Int64 {
        let year = 1970 + Hour.floorDivide(month, 12)
        let monthOfYear = month - Hour.floorDivide(month, 12) * 12 + 1
        return UTCTime.daysFromCivil(year: year, month: monthOfYear, day: 1)
    }
}
