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
