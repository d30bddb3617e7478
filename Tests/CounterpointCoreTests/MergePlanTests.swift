import CoreTestSupport
import CounterpointCore
import Foundation
import Patience
import Testing

/// The merge plan, the rollup calendar and exact top-k as pure code, against brute force.
@Suite("Merge plan, rollups and exact top-k", .onTestThreads)
struct MergePlanTests {
    @Test("days and months agree with Foundation's Gregorian calendar in UTC from 1970 to 2100")
    func calendarMatchesFoundation() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        for day in stride(from: Int64(0), to: 47_482, by: 13) {
            let date = Date(timeIntervalSince1970: Double(day) * 86_400)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let civil = UTCTime.civilFromDays(day)
            #expect(civil.year == Int64(parts.year!) && civil.month == Int64(parts.month!) && civil.day == Int64(parts.day!))
            #expect(UTCTime.daysFromCivil(year: civil.year, month: civil.month, day: civil.day) == day)
            let month = UTCCalendar.month(ofDay: day)
            #expect(month == Int64((parts.year! - 1970) * 12 + parts.month! - 1))
            #expect(UTCCalendar.firstDay(ofMonth: month) == day - Int64(parts.day! - 1))
        }
    }

    @Test("a decomposition tiles its range exactly, in time order, with the coarsest buckets that fit")
    func decompositionTiles() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let lower = Int64.random(in: 491_000...500_000, using: &random)
            let upper = lower + Int64.random(in: 0...(Bool.random() ? 80 : 24 * 400), using: &random)
            let range = HourRange(Hour(index: lower), Hour(index: upper))
            for coarsest in RollupLevel.allCases {
                let parts = RollupDecomposition(range, coarsest: coarsest)
                var cursor = range.lower
                for span in parts.spans {
                    #expect(span.level <= coarsest)
                    #expect(span.hours.lower == cursor)
                    cursor = span.hours.upper
                }
                #expect(cursor == (range.isEmpty ? range.lower : range.upper))
                // Coarsest fit: edge hours never hold a whole day, edge days never a whole month.
                if coarsest >= .day {
                    #expect(parts.leadingHours.upper - parts.leadingHours.lower < 24 || parts.leadingDays.isEmpty && parts.months.isEmpty)
                    #expect(parts.trailingHours.upper - parts.trailingHours.lower < 24)
                }
                if coarsest == .month {
                    for days in [parts.leadingDays, parts.trailingDays] where !days.isEmpty {
                        let monthsInside = RollupDecomposition(days.hours, coarsest: .month).months
                        #expect(monthsInside.isEmpty, "\(days) holds a whole month")
                    }
                }
            }
        }
    }

    @Test("summing a plan's batch spans and realtime gaps equals the merge rule hour by hour, for random coverage")
    func planMatchesBruteForce() {
        var random = SystemRandomNumberGenerator()
        let origin: Int64 = 496_000
        for _ in 0..<400 {
            // Per-hour counts of each layer over ~70 days, and random covered ranges.
            let hours = 24 * 70
            let batch = (0..<hours).map { _ in Int64.random(in: 0...5, using: &random) }
            let realtime = (0..<hours).map { _ in Int64.random(in: 0...5, using: &random) }
            var coverage = Coverage()
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let lower = origin + Int64.random(in: 0..<Int64(hours), using: &random)
                coverage.insert(HourRange(Hour(index: lower), Hour(index: min(origin + Int64(hours), lower + Int64.random(in: 1...900, using: &random)))))
            }
            func batchAt(_ hour: Int64) -> Int64 { coverage.contains(Hour(index: hour)) ? batch[Int(hour - origin)] : 0 }
            func sum(_ span: RollupSpan) -> Int64 {
                (span.hours.lower.index..<span.hours.upper.index).reduce(0) { $0 + batchAt($1) }
            }
            let lower = origin + Int64.random(in: 0..<Int64(hours), using: &random)
            let range = HourRange(Hour(index: lower), Hour(index: lower + Int64.random(in: 0...Int64(hours) - (lower - origin), using: &random)))
            let plan = MergePlan(range: range, coverage: coverage)
            let planned = plan.batchSpans.reduce(0) { $0 + sum($1) }
                + plan.realtimeGaps.reduce(0) { total, gap in
                    total + (gap.lower.index..<gap.upper.index).reduce(0) { $0 + realtime[Int($1 - origin)] }
                }
            let expected = (range.lower.index..<range.upper.index).reduce(Int64(0)) { total, hour in
                let covered = coverage.contains(Hour(index: hour))
                return total + MergeRule.plays(covered: covered, batch: batch[Int(hour - origin)], realtime: realtime[Int(hour - origin)])
            }
            #expect(planned == expected)
        }
    }

    @Test("timeline buckets are marked batch, realtime or mixed by the covered hours inside them")
    func bucketSources() {
        let day = Hour(index: 496_920)
        let coverage = Coverage([HourRange(day, day.advanced(by: 30))])
        let buckets = TimelineBuckets(range: HourRange(day, day.advanced(by: 72)), step: .day)
        #expect(buckets.count == 3)
        #expect(buckets.sources(coverage) == [.batch, .mixed, .realtime])
        #expect(buckets.index(of: day.advanced(by: 47)) == 1)
        let ragged = TimelineBuckets(range: HourRange(day.advanced(by: 20), day.advanced(by: 30)), step: .day)
        #expect(ragged.count == 2 && ragged.hoursInRange(0) == 4 && ragged.hoursInRange(1) == 6)
        #expect(ragged.sources(coverage) == [.batch, .batch])
    }

    @Test("the threshold algorithm ranks exactly like a full sort, ties by track id, for skewed and flat lists")
    func thresholdTopKMatchesSort() throws {
        var random = SystemRandomNumberGenerator()
        for trial in 0..<300 {
            let tracks = Int64.random(in: 1...300, using: &random)
            let listCount = Int.random(in: 1...12, using: &random)
            let skewed = trial % 2 == 0
            var lists: [[Int64: Int64]] = []
            for _ in 0..<listCount {
                var list: [Int64: Int64] = [:]
                for track in 1...tracks where Bool.random(using: &random) {
                    let plays = skewed ? Int64(1_000 / track) + Int64.random(in: 0...3, using: &random)
                                       : Int64.random(in: 1...4, using: &random)
                    if plays > 0 { list[track] = plays }
                }
                lists.append(list)
            }
            // In any order: the in-memory lists rank their entries themselves.
            var ranked = lists.map { list in
                RankedList.inMemory(PartialRanking(list.map { RankedEntry(id: $0.key, plays: $0.value) }.shuffled(using: &random)))
            }
            let limit = Int.random(in: 1...20, using: &random)
            let result = try ThresholdTopK.top(limit: limit, lists: &ranked) { track in
                TrackPlays(id: track, batchPlays: lists.reduce(0) { $0 + ($1[track] ?? 0) }, realtimePlays: 0)
            }
            var totals: [Int64: Int64] = [:]
            for list in lists { for (track, plays) in list { totals[track, default: 0] += plays } }
            let expected = totals.map { TrackPlays(id: $0.key, batchPlays: $0.value, realtimePlays: 0) }
                .sorted(by: TrackPlays.ranksAbove).prefix(limit)
            #expect(result == Array(expected))
        }
    }

    @Test("a partial ranking gives the order of a full sort, ties by track id, however deep and in whatever steps it is read")
    func partialRankingMatchesSort() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let entries = (0..<Int.random(in: 0...500, using: &random)).map { _ in
                RankedEntry(id: Int64.random(in: 1...10_000, using: &random), plays: Int64.random(in: 1...20, using: &random))
            }
            let sorted = entries.sorted { $0.plays != $1.plays ? $0.plays > $1.plays : $0.id < $1.id }
            let ranking = PartialRanking(entries)
            // Reads that go back to the start, repeat and skip, as successive rankings of one window do.
            for _ in 0..<3 {
                let offset = Int.random(in: 0...entries.count, using: &random)
                let limit = Int.random(in: 1...200, using: &random)
                #expect(ranking.entries(from: offset, limit: limit) == Array(sorted[min(offset, sorted.count)..<min(sorted.count, offset + limit)]))
            }
            #expect(ranking.entries(from: 0, limit: entries.count + 1) == sorted)
        }
    }

    @Test("chunked sorted access reads every entry once, in order, across chunk boundaries")
    func rankedListChunks() throws {
        let entries = (0..<1_000).map { RankedEntry(id: Int64($0), plays: Int64(1_000 - $0)) }
        var fetches = 0
        var list = RankedList(firstChunk: 3) { offset, limit in
            fetches += 1
            return Array(entries[min(offset, entries.count)..<min(entries.count, offset + limit)])
        }
        var read: [RankedEntry] = []
        while let entry = try list.next() { read.append(entry) }
        #expect(read == entries)
        #expect(fetches <= 10)
    }
}
