import BatchJob
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Generator
import StoreTestSupport
import Testing

/// The batch counts every signal of SPEC §11 from the logs — hour files and unpartitioned files,
/// in memory and spilled — de-duplicated by `event_id` whatever the type, retractions at −1.
/// The truth is summed from the lines written, by hand.
@Suite("BatchJob counts every signal", .onTestThreads)
struct SignalBatchTests {
    static let types = ["play", "download", "like", "unlike", "repost", "unrepost", "comment", "comment_deleted"]

    static func line(_ id: String, _ type: String, track: Int64, at hour: Hour, minute: Int = 5) -> String {
        #"{"event_id":"\#(id)","type":"\#(type)","track_id":\#(track),"occurred_at":"\#(hour.description.prefix(14))\#(minute < 10 ? "0" : "")\#(minute):00Z","creator_id":3}"#
    }

    @Test("every signal's net count per track and hour equals the events', duplicates dropped, from hour files and unpartitioned files",
          arguments: StoreKind.allCases, [nil, 1] as [Int?])
    func everySignalFromLogs(_ store: StoreKind, spillBudget: Int?) throws {
        try Workspace.with(store) { workspace in
            var truth: [String: Int64] = [:]  // "track@hour@signal"
            var random = SeededRandom(seed: 42)
            var hourLines: [Int64: [String]] = [10: [], 11: []]
            var loose: [String] = []
            var written: [(offset: Int64, line: String)] = []
            var unique = 0
            for index in 0..<600 {
                // One line in six is a copy of an earlier one (the same event delivered twice),
                // in either kind of file.
                let copy = index > 0 && random.next(below: 6) == 0
                let (offset, text): (Int64, String)
                if copy {
                    (offset, text) = written[random.next(below: written.count)]
                } else {
                    offset = Int64(10 + index % 2)
                    let typeIndex = random.next(below: 8)
                    let track = Int64(random.next(below: 5) + 1)
                    let signal = ["plays", "downloads", "likes", "likes", "reposts", "reposts", "comments", "comments"][typeIndex]
                    truth["\(track)@\(offset)@\(signal)", default: 0] += [3, 5, 7].contains(typeIndex) ? -1 : 1
                    text = Self.line("e\(index)", Self.types[typeIndex], track: track, at: hour(offset))
                    written.append((offset, text))
                    unique += 1
                }
                if random.next(below: 3) == 0 { loose.append(text) } else { hourLines[offset]!.append(text) }
            }
            for (offset, lines) in hourLines { try workspace.writeHour(hour(offset), lines) }
            try workspace.writeLines(loose, to: workspace.logs + "/events.ndjson")

            let summary = try workspace.run(from: hour(10), to: hour(12), workers: 2, spillBudget: spillBudget)
            #expect(summary.rejections.total == 0)
            #expect(summary.valid == 600)
            #expect(summary.duplicates == 600 - unique)

            let reader = try workspace.store.openReader()
            var found: [String: Int64] = [:]
            for track in 1...5 as ClosedRange<Int64> {
                for offset in 10...11 as ClosedRange<Int64> {
                    let counts = try reader.counts(track: track, in: HourRange(hour(offset), hour(offset + 1)))
                    #expect(counts.realtime == .zero)
                    for signal in Signal.allCases where counts.batch[signal] != 0 {
                        found["\(track)@\(offset)@\(signal.rawValue)"] = counts.batch[signal]
                    }
                }
            }
            #expect(found == truth.filter { $0.value != 0 })
            #expect(truth.values.contains { $0 < 0 }, "some (track, hour) nets a negative count")
        }
    }
}

/// SPEC §11's waveform of comments, from logs the test writes: a `comment` with a position and a
/// duration counts +1 in its bucket, a `comment_deleted` with both −1, either without them only
/// in the comments (so in `comments_without_position`). The truth is worked out from the
/// positions written, by docs/openapi.yaml's formula, beside the plays' own waveform.
@Suite("BatchJob keeps the comments' waveform", .onTestThreads)
struct CommentsWaveformBatchTests {
    /// The buckets and totals of one signal over some (track, hour)s.
    struct Tally: Equatable {
        var total: Int64 = 0
        var buckets = [Int64](repeating: 0, count: 100)

        var withoutPosition: Int64 { total - buckets.reduce(0, +) }

        mutating func add(_ weight: Int64, position: Int64?, duration: Int64?) {
            total += weight
            if let position, let duration { buckets[Int(min(99, position * 100 / duration))] += weight }
        }

        mutating func add(_ other: Tally) {
            total += other.total
            for index in 0..<100 { buckets[index] += other.buckets[index] }
        }
    }

    static func line(_ id: String, _ type: String, track: Int64, at hour: Hour, position: Int64?, duration: Int64?) -> String {
        var text = #"{"event_id":"\#(id)","type":"\#(type)","track_id":\#(track),"occurred_at":"\#(hour.description.prefix(14))05:00Z""#
        if let position { text += #","position_ms":\#(position)"# }
        if let duration { text += #","duration_ms":\#(duration)"# }
        return text + "}"
    }

    @Test("comments and deletions count in their buckets, the rest as without position, over hours, day and month rollups",
          arguments: StoreKind.allCases, [nil, 1] as [Int?])
    func commentsWaveformFromLogs(_ store: StoreKind, spillBudget: Int?) throws {
        try Workspace.with(store) { workspace in
            // November 2026 whole (so that its month and day rollups are read), and 1 December.
            let (monthStart, monthEnd): (Int64, Int64) = (-19 * 24, 11 * 24)
            let eventHours: [Int64] = [monthStart, -300, 10, 11, 23, 24, 200, monthEnd - 1, monthEnd + 3]
            var comments: [Int64: [Hour: Tally]] = [:], plays: [Int64: [Hour: Tally]] = [:]
            var random = SeededRandom(seed: 7)
            var hourLines: [Hour: [String]] = [:]
            var loose: [String] = []
            var written: [(hour: Hour, line: String)] = []
            for index in 0..<900 {
                let copy = index > 0 && random.next(below: 6) == 0
                var entry: (hour: Hour, line: String)
                if copy {
                    entry = written[random.next(below: written.count)]
                } else {
                    let at = hour(eventHours[random.next(below: eventHours.count)])
                    let track = Int64(random.next(below: 4) + 1)
                    let duration = Int64(random.next(below: 300_000) + 1)
                    // A few positions at or past the end: bucket 99.
                    let position = Int64(random.next(below: Int(duration) + 2_000))
                    let shape = random.next(below: 8)
                    let type = ["play", "comment", "comment", "comment_deleted", "comment_deleted", "like", "comment", "play"][random.next(below: 8)]
                    // Comments mostly with both; deletions 1 in 8 with neither, 1 in 8 with a position alone.
                    let (p, d): (Int64?, Int64?) = switch (type, shape) {
                    case ("comment", 0), ("comment_deleted", 0): (nil, nil)
                    case ("comment_deleted", 1): (position, nil)
                    default: (position, duration)
                    }
                    switch type {
                    case "play": plays[track, default: [:]][at, default: Tally()].add(1, position: p, duration: d)
                    case "comment": comments[track, default: [:]][at, default: Tally()].add(1, position: p, duration: d)
                    case "comment_deleted": comments[track, default: [:]][at, default: Tally()].add(-1, position: p, duration: d)
                    default: break
                    }
                    entry = (at, Self.line("w\(index)", type, track: track, at: at, position: p, duration: d))
                    written.append(entry)
                }
                if random.next(below: 3) == 0 { loose.append(entry.line) } else { hourLines[entry.hour, default: []].append(entry.line) }
            }
            for (at, lines) in hourLines { try workspace.writeHour(at, lines) }
            try workspace.writeLines(loose, to: workspace.logs + "/events.ndjson")
            let summary = try workspace.run(from: hour(monthStart), to: hour(monthEnd + 24), workers: 2, spillBudget: spillBudget)
            #expect(summary.rejections.total == 0)

            let allComments = comments.values.flatMap(\.values)
            #expect(allComments.contains { $0.buckets.contains { $0 < 0 } }, "some hour's bucket nets negative")
            #expect(allComments.contains { $0.withoutPosition < 0 }, "some hour nets negative comments without position")
            let reader = try workspace.store.openReader()
            let ranges = [hours(monthStart, monthEnd), hours(0, 24), hours(5, 40), hours(monthStart, monthEnd + 24),
                          hours(10, 11), hours(monthEnd - 1, monthEnd + 4), HourRange.allTime]
            for track in 1...4 as ClosedRange<Int64> {
                for range in ranges {
                    func truth(_ tallies: [Int64: [Hour: Tally]]) -> Tally {
                        var sum = Tally()
                        for (at, tally) in tallies[track] ?? [:] where range.contains(at) { sum.add(tally) }
                        return sum
                    }
                    let expected = truth(comments)
                    let answer = try reader.waveform(track: track, in: range, signal: .comments)
                    #expect(answer.signal == .comments)
                    #expect(answer.buckets == expected.buckets, "track \(track) \(range)")
                    #expect(answer.total == expected.total && answer.withoutPosition == expected.withoutPosition, "track \(track) \(range)")
                    // The plays' waveform is the plays' alone.
                    let playsAnswer = try reader.waveform(track: track, in: range, signal: .plays)
                    #expect(playsAnswer.buckets == truth(plays).buckets && playsAnswer.total == truth(plays).total, "track \(track) \(range)")
                }
            }
        }
    }
}
