import Generator
import Patience
import Testing
@testable import CounterpointCore

@Suite("De-duplication and play counts", .onTestThreads)
struct AggregationTests {
    @Test("an event id is a duplicate only within the same hour")
    func duplicatesPerHour() {
        var seen = SeenEvents(minimumCapacity: 4)
        let id = EventID("01JD3Q6Z8W4N5V7K2M9P0R1S3T")!
        let inserted1 = seen.insert(id, in: Hour(index: 10))
        #expect(inserted1)
        let inserted2 = seen.insert(id, in: Hour(index: 10))
        #expect(!inserted2)
        let inserted3 = seen.insert(id, in: Hour(index: 11))
        #expect(inserted3)
        let inserted4 = seen.insert(EventID("01JD3Q6Z8W4N5V7K2M9P0R1S3U")!, in: Hour(index: 10))
        #expect(inserted4)
        #expect(seen.count == 3)
        #expect(seen.contains(id, in: Hour(index: 11)))
        #expect(!seen.contains(id, in: Hour(index: 12)))
    }

    @Test("the set stays exact while it grows, for ids of every length")
    func exactWhileGrowing() {
        var seen = SeenEvents(minimumCapacity: 1)
        var reference = Set<String>()
        var rng = SeededRandom(seed: 5)
        let alphabet = Array("ABCDEFGHJKMNPQRSTVWXYZ0123456789_-")
        for _ in 0..<20_000 {
            let length = Int.random(in: 1...64, using: &rng)
            let text = String((0..<length).map { _ in alphabet[Int.random(in: 0..<(length < 3 ? 3 : alphabet.count), using: &rng)] })
            let hour = Int64.random(in: 0..<3, using: &rng)
            let isNew = reference.insert("\(hour) \(text)").inserted
            let inserted = seen.insert(EventID(text)!, in: Hour(index: hour))
            #expect(inserted == isNew)
        }
        #expect(seen.count == reference.count)
        seen.removeAll()
        #expect(seen.isEmpty)
        let inserted6 = seen.insert(EventID("A")!, in: Hour(index: 0))
        #expect(inserted6)
    }

    @Test("ids that differ only in length are different")
    func lengthMatters() {
        var seen = SeenEvents()
        let inserted7 = seen.insert(EventID("A")!, in: Hour(index: 0))
        #expect(inserted7)
        let inserted8 = seen.insert(EventID("AA")!, in: Hour(index: 0))
        #expect(inserted8)
        let inserted9 = seen.insert(EventID(String(repeating: "0", count: 8))!, in: Hour(index: 0))
        #expect(inserted9)
        let inserted10 = seen.insert(EventID(String(repeating: "0", count: 9))!, in: Hour(index: 0))
        #expect(inserted10)
        #expect(seen.count == 4)
    }

    @Test("plays add up per track and hour, through growth, and a copy is independent")
    func playCounts() {
        var counts = HourCounts(minimumCapacity: 1)
        var reference: [String: Int64] = [:]
        var rng = SeededRandom(seed: 11)
        for _ in 0..<10_000 {
            let track = Int64.random(in: 1...500, using: &rng)
            let hour = Int64.random(in: -5...5, using: &rng)
            counts.add(id: track, hour: Hour(index: hour))
            reference["\(track)@\(hour)", default: 0] += 1
        }
        #expect(counts.count == reference.count)
        #expect(counts.totalPlays == 10_000)
        #expect(Dictionary(uniqueKeysWithValues: counts.map { ("\($0.id)@\($0.hour.index)", $0.plays) }) == reference)

        var doubled = counts
        for element in counts { doubled.add(id: element.id, hour: element.hour, weight: element.plays) }
        #expect(doubled.totalPlays == 20_000)
        #expect(doubled.count == counts.count)
        let some = counts.first { _ in true }!
        #expect(doubled.first { $0.id == some.id && $0.hour == some.hour }?.plays == 2 * some.plays)

        doubled.removeAll()
        #expect(doubled.isEmpty)
        #expect(doubled.totalPlays == 0)
        #expect(Array(doubled).isEmpty)
        #expect(counts.count == reference.count) // a copy is independent
    }

    @Test("every signal's net count per track and hour, retractions included, comes out merged in both key orders")
    func signalCounts() {
        var counts = HourCounts(minimumCapacity: 4)
        var reference: [CountKey: SignalCounts] = [:]
        var rng = SeededRandom(seed: 12)
        for _ in 0..<20_000 {
            let track = Int64.random(in: 1...300, using: &rng)
            let hour = Hour(index: Int64.random(in: -3...40, using: &rng))
            // One event in four is not a play; retractions weigh −1.
            let type = Int.random(in: 0..<4, using: &rng) == 0 ? EventType.allCases.randomElement(using: &rng)! : .play
            counts.add(id: track, hour: hour, signal: type.signal, weight: type.weight)
            reference[CountKey(trackID: track, hour: hour.index), default: SignalCounts()][type.signal] += type.weight
        }
        #expect(counts.totalPlays == reference.values.reduce(0) { $0 + $1.plays })
        for order in [KeyOrder.idThenHour, .hourThenID] {
            let rows = counts.sortedElements(order)
            let keys = rows.map { order == .idThenHour ? [$0.id, $0.hour.index] : [$0.hour.index, $0.id] }
            #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) }, "rows in \(order) order")
            #expect(Set(rows.map { CountKey(trackID: $0.id, hour: $0.hour.index) }).count == rows.count, "one row per key")
            #expect(Dictionary(uniqueKeysWithValues: rows.map { (CountKey(trackID: $0.id, hour: $0.hour.index), $0.counts) }) == reference)
        }
        #expect(reference.values.contains { $0.likes < 0 }, "some hour nets negative likes")
    }

    private struct CountKey: Hashable {
        var trackID: Int64
        var hour: Int64
    }
}
