import BatchJob
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Generator
import StoreTestSupport
import Testing

/// The batch counts the creators the events name (SPEC §11) beside their tracks, in the same
/// atomic replacement: every signal, the plays' countries and their distinct listeners across
/// the catalogue, rankings among creators, and a rerun that replaces what it covers. The truth
/// is summed from the lines written, by hand.
@Suite("BatchJob counts the creators the events name", .onTestThreads)
struct CreatorBatchTests {
    static let types = ["play", "download", "like", "unlike", "repost", "unrepost", "comment", "comment_deleted"]
    static let signals = ["plays", "downloads", "likes", "likes", "reposts", "reposts", "comments", "comments"]

    /// What the lines say, summed by hand.
    struct Truth {
        var counts: [String: Int64] = [:]  // "creator@hour@signal"
        var countries: [Int64: [String: Int64]] = [:]  // creator → country → plays
        var listeners: [Int64: Set<Int64>] = [:]  // creator → listener ids over the range
        var plays: [Int64: Int64] = [:]  // creator → plays over the range
        var tracks: [Int64: [Int64: SignalCounts]] = [:]  // creator → track → every signal over the range

        /// The creator's tracks ranked by `signal` as SPEC §11 says: positive counts, most first, ties by id.
        func ranked(_ creator: Int64, by signal: Signal) -> [CreatorTrack] {
            (tracks[creator] ?? [:]).filter { $0.value[signal] > 0 }.map { CreatorTrack(trackID: $0.key, counts: $0.value) }
                .sorted { ($1.counts[signal], $0.trackID) < ($0.counts[signal], $1.trackID) }
        }
    }

    static func logs(seed: UInt64) -> (hours: [Int64: [String]], loose: [String], truth: Truth, unique: Int) {
        var truth = Truth()
        var random = SeededRandom(seed: seed)
        var hours: [Int64: [String]] = [10: [], 11: []]
        var loose: [String] = []
        var written: [(offset: Int64, line: String)] = []
        for index in 0..<900 {
            // One line in eight is a copy of an earlier one, delivered again in either kind of file.
            if index > 0, random.next(below: 8) == 0 {
                let copy = written[random.next(below: written.count)]
                if random.next(below: 2) == 0 { loose.append(copy.line) } else { hours[copy.offset]!.append(copy.line) }
                continue
            }
            let offset = Int64(10 + index % 2)
            let type = random.next(below: 8) < 5 ? 0 : random.next(below: 8)
            let track = Int64(random.next(below: 12) + 1)
            // Most events name their track's creator, some another creator, some none.
            let creator: Int64? = switch random.next(below: 10) {
            case 0: nil
            case 1: 8
            default: track % 4 + 1
            }
            let country = ["DE", "BR", "JP"][random.next(below: 3)]
            let listener = Int64(random.next(below: 40) + 1)
            var fields = #""event_id":"c\#(index)","type":"\#(types[type])","track_id":\#(track),"occurred_at":"\#(hour(offset).description.prefix(14))07:00Z""#
            if let creator {
                fields += #","creator_id":\#(creator)"#
                let weight: Int64 = [3, 5, 7].contains(type) ? -1 : 1
                truth.counts["\(creator)@\(offset)@\(signals[type])", default: 0] += weight
                truth.tracks[creator, default: [:]][track, default: .zero][Signal(named: signals[type])!] += weight
            }
            if type == 0 {
                fields += #","country":"\#(country)","listener_id":\#(listener)"#
                if let creator {
                    truth.countries[creator, default: [:]][country, default: 0] += 1
                    truth.listeners[creator, default: []].insert(listener)
                    truth.plays[creator, default: 0] += 1
                }
            }
            let line = "{" + fields + "}"
            written.append((offset, line))
            if random.next(below: 3) == 0 { loose.append(line) } else { hours[offset]!.append(line) }
        }
        return (hours, loose, truth, written.count)
    }

    @Test("a creator's every signal, countries, listeners and rank equal the events that named it; a rerun replaces them",
          arguments: StoreKind.allCases, [nil, 1] as [Int?])
    func creatorsFromLogs(_ store: StoreKind, spillBudget: Int?) throws {
        try Workspace.with(store) { workspace in
            let (hours, loose, truth, unique) = Self.logs(seed: 7)
            for (offset, lines) in hours { try workspace.writeHour(hour(offset), lines) }
            try workspace.writeLines(loose, to: workspace.logs + "/events.ndjson")
            let range = HourRange(hour(10), hour(12))

            for run in 0..<2 {  // the second run replaces the hours the first covered
                let summary = try workspace.run(from: hour(10), to: hour(12), workers: 2, spillBudget: spillBudget)
                #expect(summary.rejections.total == 0)
                #expect(summary.valid == hours.values.map(\.count).reduce(0, +) + loose.count)
                #expect(summary.valid - summary.duplicates == unique)

                let reader = try workspace.store.openReader()
                var found: [String: Int64] = [:]
                for creator in 1...9 as ClosedRange<Int64> {
                    for offset in 10...11 as ClosedRange<Int64> {
                        let counts = try reader.counts(.creator(creator), in: HourRange(hour(offset), hour(offset + 1)))
                        #expect(counts.realtime == .zero)
                        for signal in Signal.allCases where counts.batch[signal] != 0 {
                            found["\(creator)@\(offset)@\(signal.rawValue)"] = counts.batch[signal]
                        }
                    }
                    let plays = truth.plays[creator] ?? 0
                    #expect(try reader.plays(.creator(creator), in: range).plays == plays, "run \(run), creator \(creator)")
                    let dimensions = try reader.dimensions(.creator(creator), in: range)
                    let countries = Dictionary(uniqueKeysWithValues: dimensions.breakdown(.country).compactMap { entry in
                        entry.value.map { ($0.string, entry.plays) }
                    })
                    #expect(countries == truth.countries[creator] ?? [:], "creator \(creator)")
                    #expect(dimensions.waveform.allSatisfy { $0 == 0 }, "a creator has no waveform")
                    let listeners = try reader.listeners(.creator(creator), in: range)
                    #expect(listeners.exact)
                    #expect(listeners.listeners == Int64(truth.listeners[creator]?.count ?? 0), "creator \(creator)")
                    // The timeline's days sum the hours.
                    let timeline = try reader.timeline(.creator(creator), in: range, step: .hour, signal: .plays)
                    #expect(timeline.map(\.count).reduce(0, +) == plays)
                }
                #expect(found == truth.counts.filter { $0.value != 0 }, "run \(run)")
                // Each creator's tracks ranked by every signal, with every signal's count.
                for creator in 1...8 as ClosedRange<Int64> {
                    for signal in Signal.allCases {
                        let tracks = try reader.tracks(ofCreator: creator, in: range, signal: signal, limit: 1_000)
                        #expect(tracks == truth.ranked(creator, by: signal), "creator \(creator) by \(signal)")
                    }
                    #expect(try reader.tracks(ofCreator: creator, in: range, limit: 2) == Array(truth.ranked(creator, by: .plays).prefix(2)))
                }
                #expect(truth.counts.values.contains { $0 < 0 }, "some (creator, hour) nets a negative count")

                let expected = truth.plays.filter { $0.value > 0 }.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                let top = try reader.top(.creator, in: range, limit: 3)
                #expect(top.map(\.id) == expected.prefix(3).map(\.key))
                #expect(top.map(\.plays) == expected.prefix(3).map(\.value))
                // A creator no event named answers zeros.
                #expect(try reader.counts(.creator(1_000), in: range).total == .zero)
            }
        }
    }
}
