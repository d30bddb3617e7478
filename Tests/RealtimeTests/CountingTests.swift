import CounterpointCore
import CounterStore
import Foundation
import Kafka
import Patience
import Realtime
import StoreTestSupport
import Testing

@Suite("Counting plays from Kafka into the realtime store", .onTestThreads)
struct CountingTests {
    @Test("counts equal the produced events, stored offsets equal the high watermarks, and a restart resumes exactly", arguments: StoreKind.allCases)
    func countsAndResume(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 4)
            let configuration = Fixtures.configuration(cluster, store: store)
            var produced = Fixtures.events(20_000)
            try Fixtures.produce(produced.values, to: cluster)

            let first = try await Fixtures.consumeUntilStored(20_000, configuration: configuration)
            try first.stop()
            var contents = try StoreContents.read(configuration.store)
            #expect(mismatch(contents.counts, produced.truth) == nil)
            #expect(contents.offsets == (try Fixtures.highWatermarks(cluster, partitions: 4)))
            #expect(first.status().eventsConsumed == 20_000)
            #expect(first.status().lastFlush != nil)

            let more = Fixtures.events(10_000, seed: 2)
            try Fixtures.produce(more.values, to: cluster)
            produced.append(more)
            let second = try await Fixtures.consumeUntilStored(30_000, configuration: configuration)
            try second.stop()
            contents = try StoreContents.read(configuration.store)
            #expect(mismatch(contents.counts, produced.truth) == nil)
            #expect(contents.offsets == (try Fixtures.highWatermarks(cluster, partitions: 4)))
            // It started where the first one's last flush ended: nothing was read twice.
            #expect(second.status().eventsConsumed == 10_000)
        }
    }

    @Test("every signal's events count by their weight for their track and the creator they name, retractions at −1, in the same flushes as the plays, comments on their waveform",
          arguments: StoreKind.allCases)
    func everySignal(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 2)
            let configuration = Fixtures.configuration(cluster, store: store)
            let types = ["play", "download", "like", "unlike", "repost", "unrepost", "comment", "comment_deleted"]
            let signals = ["plays", "downloads", "likes", "likes", "reposts", "reposts", "comments", "comments"]
            var truth: [String: Int64] = [:]  // "track@hour offset@signal", "creator 2@hour offset@signal"
            // Per track: net comments in each waveform bucket (SPEC §11), of those with a position and a duration.
            var commentBuckets: [Int64: [Int64]] = [:]
            // Per creator, per track: every signal of the events that named both.
            var byTrack: [Int64: [Int64: SignalCounts]] = [:]
            var values: [[UInt8]?] = []
            var random = SystemRandomNumberGenerator()
            for index in 0..<3_000 {
                let type = Int.random(in: 0..<8, using: &random)
                let (track, offset) = (Int64.random(in: 1...6, using: &random), Int.random(in: 10...12, using: &random))
                let weight: Int64 = [3, 5, 7].contains(type) ? -1 : 1
                truth["\(track)@\(offset)@\(signals[type])", default: 0] += weight
                // Most events name their track's creator; some another one, some none (SPEC §11:
                // a creator counts the events that named it).
                let creator: Int64? = switch Int.random(in: 0..<10, using: &random) {
                case 0: nil
                case 1: 9
                default: track % 3 + 1
                }
                if let creator {
                    truth["creator \(creator)@\(offset)@\(signals[type])", default: 0] += weight
                    byTrack[creator, default: [:]][track, default: .zero][Signal(named: signals[type])!] += weight
                }
                let creatorField = creator.map { #","creator_id":\#($0)"# } ?? ""
                // Every type may carry a position; only comments' count on their waveform, and 1 in 4 has none.
                var position = ""
                if Int.random(in: 0..<4, using: &random) != 0 {
                    let (at, duration) = (Int64.random(in: 0...10_100, using: &random), Int64.random(in: 9_900...10_000, using: &random))
                    position = #","position_ms":\#(at),"duration_ms":\#(duration)"#
                    if signals[type] == "comments" {
                        commentBuckets[track, default: [Int64](repeating: 0, count: 100)][Int(min(99, at * 100 / duration))] += weight
                    }
                }
                values.append(Array(#"{"event_id":"s\#(index)","type":"\#(types[type])","track_id":\#(track),"occurred_at":"2026-11-20T\#(offset):30:00Z"\#(creatorField)\#(position)}"#.utf8))
            }
            try Fixtures.produce(values, to: cluster)
            let consumer = try await Fixtures.consumeUntilStored(values.count, configuration: configuration)
            #expect(consumer.status().rejections.total == 0)
            try consumer.stop()

            let reader = try configuration.store.openReader()
            var found: [String: Int64] = [:]
            let ten = Hour(epochMilliseconds: 1_795_168_800_000)  // 2026-11-20T10:00:00Z
            let subjects = (1...6).map { Subject.track($0) } + [1, 2, 3, 9, 5].map { Subject.creator($0) }
            for subject in subjects {
                for offset in 10...12 {
                    let hour = ten.advanced(by: Int64(offset - 10))
                    let counts = try reader.counts(subject, in: HourRange(hour, hour.advanced(by: 1)))
                    #expect(counts.batch == .zero)
                    let name = subject.kind == .track ? "\(subject.id)" : "creator \(subject.id)"
                    for signal in Signal.allCases where counts.realtime[signal] != 0 {
                        found["\(name)@\(offset)@\(signal.rawValue)"] = counts.realtime[signal]
                    }
                }
            }
            #expect(found == truth.filter { $0.value != 0 })
            for creator in [1, 2, 3, 9] as [Int64] {
                let tracks = try reader.tracks(ofCreator: creator, in: HourRange(ten, ten.advanced(by: 3)), signal: .plays, limit: 10)
                let expected = (byTrack[creator] ?? [:]).filter { $0.value.plays > 0 }
                    .sorted { ($1.value.plays, $0.key) < ($0.value.plays, $1.key) }
                #expect(tracks.map(\.trackID) == expected.map(\.key) && tracks.map(\.counts) == expected.map(\.value), "creator \(creator)")
            }
            for track in 1...6 as ClosedRange<Int64> {
                let waveform = try reader.waveform(track: track, in: HourRange(ten, ten.advanced(by: 3)), signal: .comments)
                let buckets = commentBuckets[track] ?? [Int64](repeating: 0, count: 100)
                let comments = (10...12).reduce(0) { $0 + (truth["\(track)@\($1)@comments"] ?? 0) }
                #expect(waveform.buckets == buckets && waveform.total == comments, "track \(track)")
                #expect(waveform.withoutPosition == comments - buckets.reduce(0, +), "track \(track)")
            }
        }
    }

    @Test("rejected messages are counted by reason with samples naming topic/partition@offset, and consumption goes on", arguments: StoreKind.allCases)
    func rejectedMessages(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 1)
            let configuration = Fixtures.configuration(cluster, store: store)
            let valid = Fixtures.events(10)
            let oversized = Array(#"{"event_id":"big","type":"play","track_id":1,"occurred_at":0,"pad":""#.utf8)
                + [UInt8](repeating: UInt8(ascii: "x"), count: 70_000) + Array(#""}"#.utf8)
            let bad: [(RejectReason, [UInt8]?)] = [
                (.empty, nil),
                (.invalidUTF8, [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x7D]),
                (.tooLarge, oversized),
                (.malformedJSON, Array(#"{"event_id":"x","type":"play""#.utf8)),
                (.unsupportedType, Array(#"{"event_id":"l1","type":"hug","track_id":7,"occurred_at":"2026-11-20T10:00:00Z"}"#.utf8)),
            ]
            // valid, bad, valid, bad, …: offsets 1, 3, 5, 7, 9 are the bad ones.
            var values: [[UInt8]?] = []
            for index in 0..<10 {
                values.append(valid.values[index])
                if index < bad.count { values.append(bad[index].1) }
            }
            try Fixtures.produce(values, to: cluster, partition: 0)

            let consumer = try await Fixtures.consumeUntilStored(values.count, configuration: configuration)
            let status = consumer.status()
            try consumer.stop()

            #expect(mismatch(try StoreContents.read(configuration.store).counts, valid.truth) == nil)
            #expect(status.rejections.counts == Dictionary(uniqueKeysWithValues: bad.map { ($0.0, 1) }))
            let samples = status.rejections.samples.map { "\($0.reason.rawValue) \($0.source)" }
            #expect(samples == bad.enumerated().map { "\($0.element.0.rawValue) plays/0@\(2 * $0.offset + 1)" })
            #expect(status.rejections.samples.first { $0.reason == .unsupportedType }?.payloadPrefix.hasPrefix(#"{"event_id":"l1""#) == true)
            #expect(status.eventsConsumed == values.count)
        }
    }

    @Test("a processor whose partitions were flushed behind its back discards its flush, re-reads from the store and ends exact", arguments: StoreKind.allCases)
    func fencedFlush(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 1)
            let configuration = Fixtures.configuration(cluster, store: store)
            let all = Fixtures.events(1_500)
            try Fixtures.produce(Array(all.values[..<500]), to: cluster, partition: 0)
            let consumer = try await Fixtures.consumeUntilStored(500, configuration: configuration)

            // Another consumer takes events 500..<700 and commits them before this one flushes them.
            let other = try configuration.store.openRealtimeWriter()
            var increments: [CountRow] = []
            for value in all.values[500..<700] {
                let event = try EventParser.parse(value).get()
                increments.append(CountRow(id: event.trackID, hour: event.hour, plays: 1))
            }
            let outcome = try other.apply(
                increments: increments,
                progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: 500, nextOffset: 700, highWatermark: nil)],
                flushedAt: 0)
            try #require(outcome == .committed)

            try Fixtures.produce(Array(all.values[500...]), to: cluster, partition: 0)
            try await eventually(within: .seconds(60)) { try StoreContents.storedMessages(configuration.store) >= 1_500 }
            let status = consumer.status()
            try consumer.stop()

            let contents = try StoreContents.read(configuration.store)
            #expect(status.fencedFlushes >= 1)
            #expect(contents.offsets == [0: 1_500])
            #expect(mismatch(contents.counts, all.truth) == nil)
        }
    }
}
