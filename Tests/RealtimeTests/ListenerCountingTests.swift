import CounterpointCore
import CounterStore
import Foundation
import Kafka
import Patience
import Realtime
import StoreTestSupport
import Testing

@Suite("Counting listeners from Kafka into the realtime store", .onTestThreads)
struct ListenerCountingTests {
    @Test("listeners equal the distinct listener ids of the produced plays; every message sent twice doubles plays, never listeners",
          arguments: StoreKind.allCases)
    func duplicatesNeverRaiseListeners(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 3)
            let configuration = Fixtures.configuration(cluster, store: store)
            var random = SystemRandomNumberGenerator()
            let start = Hour(epochSeconds: 1_795_000_000)
            // Tracks 1–4 with a few dozen listeners (exact answers), track 5 with thousands.
            var listeners: [Int64: Set<Int64>] = [:]
            var plays: [Int64: Int64] = [:]
            var values: [[UInt8]] = []
            for index in 0..<6_000 {
                let track = Int64.random(in: 1...5, using: &random)
                let listener: Int64? = Int.random(in: 0..<10, using: &random) == 0 ? nil
                    : Int64.random(in: 0..<(track == 5 ? 100_000 : 30 * track), using: &random)
                let occurred = (start.epochSeconds + Int64.random(in: 0..<7_200, using: &random)) * 1000
                let listenerField = listener.map { #","listener_id":\#($0)"# } ?? ""
                let line = #"{"event_id":"e\#(index)","type":"play","track_id":\#(track)\#(listenerField),"occurred_at":\#(occurred)}"#
                // Sent twice, as a producer retrying a send would: the realtime layer counts both plays.
                values += [Array(line.utf8), Array(line.utf8)]
                plays[track, default: 0] += 2
                if let listener { listeners[track, default: []].insert(listener) }
            }
            try Fixtures.produce(values, to: cluster)
            let consumer = try await Fixtures.consumeUntilStored(values.count, configuration: configuration)
            try consumer.stop()

            let reader = try store.openReader()
            let range = HourRange(start, start.advanced(by: 3))
            for track: Int64 in 1...5 {
                let answer = try reader.listeners(track: track, in: range)
                let truth = Int64(listeners[track]?.count ?? 0)
                #expect(answer.plays.plays == plays[track], "track \(track)")
                if track < 5 {
                    #expect(answer.exact && answer.listeners == truth, "track \(track): \(answer.listeners) vs \(truth)")
                } else {
                    #expect(!answer.exact && abs(Double(answer.listeners - truth)) <= 4 * 0.0163 * Double(truth),
                            "track \(track): \(answer.listeners) vs \(truth)")
                }
            }
        }
    }
}
