import Patience
import Testing
import CoreTestSupport
@testable import CounterpointCore

@Suite("Hours and UTC time", .onTestThreads)
struct TimeTests {
    @Test("an hour floors its instant, also before 1970", arguments: [
        (Int64(0), Int64(0)), (3_599_999, 0), (3_600_000, 1), (-1, -1), (-3_600_000, -1), (-3_600_001, -2),
        (EventLimits.earliestMilliseconds, EventLimits.earliestHourIndex),
    ])
    func hourFloors(milliseconds: Int64, index: Int64) {
        #expect(Hour(epochMilliseconds: milliseconds).index == index)
    }

    @Test("hours from seconds floor the same way")
    func hourFromSeconds() {
        #expect(Hour(epochSeconds: 3_599).index == 0)
        #expect(Hour(epochSeconds: -1).index == -1)
        #expect(Hour(epochSeconds: 7_200).epochSeconds == 7_200)
    }

    @Test("the start of a day is its first hour, also before 1970")
    func startOfDay() {
        let noon = Hour(epochMilliseconds: epochMilliseconds(2026, 11, 20, 12))
        #expect(noon.startOfDay == Hour(epochMilliseconds: epochMilliseconds(2026, 11, 20)))
        #expect(Hour(index: -1).startOfDay == Hour(index: -24))
        #expect(Hour(index: 24).startOfDay == Hour(index: 24))
        #expect(TimelineStep.day.bucketStart(of: noon) == noon.startOfDay)
        #expect(TimelineStep.hour.bucketStart(of: noon) == noon)
    }

    @Test("formatting and parsing are inverse for every kind of date", arguments: [
        "2000-01-01T00:00:00Z", "2024-02-29T23:00:00Z", "2026-11-20T12:34:56Z", "2099-12-31T23:59:59Z",
        "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2100-03-01T00:00:00Z",
    ])
    func formatRoundTrip(text: String) throws {
        let milliseconds = try #require(UTCTime.parseTimestamp(text))
        #expect(milliseconds % 1000 == 0)
        #expect(UTCTime.format(epochSeconds: milliseconds / 1000) == text)
    }

    @Test("milliseconds are formatted with three digits")
    func formatMilliseconds() {
        #expect(UTCTime.format(epochMilliseconds: epochMilliseconds(2026, 11, 20, 12, 34, 56, 7)) == "2026-11-20T12:34:56.007Z")
        #expect(UTCTime.format(epochMilliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(UTCTime.parseTimestamp("2026-11-20T12:34:56.007Z") == epochMilliseconds(2026, 11, 20, 12, 34, 56, 7))
    }

    @Test("an hour describes itself as its RFC 3339 start")
    func hourDescription() {
        #expect(Hour(index: 0).description == "1970-01-01T00:00:00Z")
        #expect(HourRange(Hour(index: 0), Hour(index: 1)).description == "[1970-01-01T00:00:00Z, 1970-01-01T01:00:00Z)")
    }

    @Test("civil dates and day counts convert both ways across four centuries")
    func civilRoundTrip() {
        var day: Int64 = UTCTime.daysFromCivil(year: 1900, month: 1, day: 1)
        let last = UTCTime.daysFromCivil(year: 2300, month: 12, day: 31)
        var expected = (year: Int64(1900), month: Int64(1), day: Int64(1))
        while day <= last {
            let civil = UTCTime.civilFromDays(day)
            #expect(civil == expected)
            if civil != expected { break }
            #expect(UTCTime.daysFromCivil(year: civil.year, month: civil.month, day: civil.day) == day)
            // Step the expected civil date independently.
            expected.day += 1
            if expected.day > UTCTime.daysInMonth(year: expected.year, month: expected.month) {
                expected.day = 1
                expected.month += 1
                if expected.month > 12 { expected.month = 1; expected.year += 1 }
            }
            day += 1
        }
    }

    @Test("leap years follow the Gregorian rule")
    func leapYears() {
        #expect(UTCTime.isLeapYear(2000))
        #expect(UTCTime.isLeapYear(2024))
        #expect(!UTCTime.isLeapYear(2100))
        #expect(!UTCTime.isLeapYear(2026))
        #expect(UTCTime.daysInMonth(year: 2024, month: 2) == 29)
        #expect(UTCTime.daysInMonth(year: 2100, month: 2) == 28)
    }

    @Test("the timestamp parser accepts years outside the event range and rejects bad text", arguments: [
        ("0001-01-01T00:00:00Z", true), ("9999-12-31T23:59:59.999Z", true), ("1999-12-31T23:59:59+00:00", true),
        ("2026-11-20T12:34:56+01:00", false), ("2026-11-20T12:34:56", false), ("-2026-11-20T12:34:56Z", false),
        ("2026-11-20T12:34:56.Z", false), ("２０２６-11-20T12:34:56Z", false), ("2026-11-20T12:34:56Z\n", false),
    ])
    func timestampParserAlone(text: String, parses: Bool) {
        #expect((UTCTime.parseTimestamp(text) != nil) == parses)
    }

    @Test("the byte and String entry points agree")
    func byteEntryPoint() {
        let text = "2026-11-20T12:34:56.789+00:00"
        let fromBytes = Array(text.utf8).withUnsafeBytes { UTCTime.parseTimestamp($0) }
        #expect(fromBytes == UTCTime.parseTimestamp(text))
        #expect(fromBytes == epochMilliseconds(2026, 11, 20, 12, 34, 56, 789))
        #expect(UTCTime.parseTimestamp(UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }
}

@Suite("Coverage and the merge rule", .onTestThreads)
struct CoverageTests {
    func range(_ lower: Int64, _ upper: Int64) -> HourRange { HourRange(Hour(index: lower), Hour(index: upper)) }

    @Test("inserted ranges merge when they overlap or touch, and stay sorted")
    func insertMerges() {
        var coverage = Coverage()
        coverage.insert(range(10, 20))
        coverage.insert(range(30, 40))
        #expect(coverage.ranges == [range(10, 20), range(30, 40)])
        coverage.insert(range(20, 25)) // touches
        #expect(coverage.ranges == [range(10, 25), range(30, 40)])
        coverage.insert(range(0, 5))
        #expect(coverage.ranges == [range(0, 5), range(10, 25), range(30, 40)])
        coverage.insert(range(4, 31)) // bridges everything
        #expect(coverage.ranges == [range(0, 40)])
        coverage.insert(range(50, 50)) // empty: ignored
        #expect(coverage.ranges == [range(0, 40)])
    }

    @Test("coverage built in any order is the same")
    func insertOrderDoesNotMatter() {
        let parts = [range(5, 8), range(0, 2), range(8, 9), range(1, 3), range(20, 22)]
        let expected = Coverage(parts)
        #expect(expected.ranges == [range(0, 3), range(5, 9), range(20, 22)])
        #expect(Coverage(parts.reversed()) == expected)
    }

    @Test("contains tells covered hours from uncovered ones")
    func containsHours() {
        let coverage = Coverage([range(0, 3), range(5, 9)])
        let covered = (-1...10).filter { coverage.contains(Hour(index: $0)) }
        #expect(covered == [0, 1, 2, 5, 6, 7, 8])
        #expect(!Coverage().contains(Hour(index: 0)))
    }

    @Test("covered and uncovered parts of a range partition it")
    func coveredAndUncovered() {
        let coverage = Coverage([range(0, 3), range(5, 9), range(12, 15)])
        #expect(coverage.covered(within: range(2, 13)) == [range(2, 3), range(5, 9), range(12, 13)])
        #expect(coverage.uncovered(within: range(2, 13)) == [range(3, 5), range(9, 12)])
        #expect(coverage.uncovered(within: range(-5, 20)) == [range(-5, 0), range(3, 5), range(9, 12), range(15, 20)])
        #expect(coverage.uncovered(within: range(5, 9)) == [])
        #expect(Coverage().uncovered(within: range(1, 4)) == [range(1, 4)])
        #expect(coverage.covered(within: range(3, 5)) == [])
    }

    @Test("covered-until is the end of the latest covered range")
    func coveredUntil() {
        #expect(Coverage().coveredUntil == nil)
        #expect(Coverage([range(0, 3), range(5, 9)]).coveredUntil == Hour(index: 9))
    }

    @Test("an hour range is half-open and an inverted one is empty")
    func hourRanges() {
        #expect(range(3, 1).isEmpty)
        #expect(range(3, 1).count == 0)
        #expect(range(1, 3).contains(Hour(index: 1)))
        #expect(!range(1, 3).contains(Hour(index: 3)))
        #expect(range(0, 10).clamped(to: range(5, 20)) == range(5, 10))
        #expect(HourRange.allTime.lower.description == "2000-01-01T00:00:00Z")
        #expect(HourRange.allTime.upper.description == "2100-01-01T00:00:00Z")
    }

    @Test("a covered hour counts its batch plays, zero without a batch row; others count realtime plays")
    func mergeRule() {
        #expect(MergeRule.plays(covered: true, batch: 4, realtime: 9) == 4)
        #expect(MergeRule.plays(covered: true, batch: nil, realtime: 9) == 0)
        #expect(MergeRule.plays(covered: false, batch: 4, realtime: 9) == 9)
        #expect(MergeRule.plays(covered: false, batch: 4, realtime: nil) == 0)
    }
}
