import BatchJob
import CounterpointCore
import CounterStore
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("BatchJob counts distinct listeners of the de-duplicated plays", .onTestThreads)
struct ListenerBatchTests {
    /// One valid play with a listener id (or none) as an NDJSON line.
    static func play(_ eventID: String, track: Int64, listener: Int64?, at hour: Hour) -> String {
        let time = UTCTime.format(epochMilliseconds: (hour.epochSeconds + 7 * 60) * 1000)
        let listenerField = listener.map { #","listener_id":\#($0)"# } ?? ""
        return #"{"event_id":"\#(eventID)","type":"play","track_id":\#(track)\#(listenerField),"occurred_at":"\#(time)"}"#
    }

    /// Distinct listeners and plays without one, per track, of distinct (hour, event id)s.
    struct Truth {
        var seen = Set<String>()
        var listeners: [Int64: Set<Int64>] = [:]
        var plays: [Int64: Int64] = [:]
        var withoutListener: [Int64: Int64] = [:]

        mutating func add(_ eventID: String, track: Int64, listener: Int64?, at hour: Hour) {
            guard seen.insert("\(hour.index)/\(eventID)").inserted else { return }
            plays[track, default: 0] += 1
            if let listener { listeners[track, default: []].insert(listener) } else { withoutListener[track, default: 0] += 1 }
        }
    }

    @Test("hour files with copies, an unpartitioned file and a late file: listeners equal the exact distinct count",
          arguments: StoreKind.allCases)
    func exactListeners(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            var truth = Truth()
            var random = SystemRandomNumberGenerator()
            var lines: [Hour: [String]] = [:]
            for index in 0..<3_000 {
                let track = Int64.random(in: 1...4, using: &random)
                let at = hour(Int64.random(in: 0..<6, using: &random))
                let listener: Int64? = Int.random(in: 0..<10, using: &random) == 0 ? nil : Int64.random(in: 0..<(track == 4 ? 50_000 : 40 * track), using: &random)
                let line = Self.play("e\(index)", track: track, listener: listener, at: at)
                // Every tenth event is in the logs twice: the copy never adds a play or a listener.
                lines[at, default: []] += index % 10 == 0 ? [line, line] : [line]
                truth.add("e\(index)", track: track, listener: listener, at: at)
            }
            for (at, hourLines) in lines { try workspace.writeHour(at, hourLines) }
            try workspace.close(hour(0), hour(1), hour(2), hour(3), hour(4), hour(5))
            let summary = try workspace.run()
            #expect(summary.duplicates == 300)
            try Self.check(workspace, truth)

            // A late file in hour 2, half copies and half new: an incremental run rebuilds that hour alone.
            var late = Array((lines[hour(2)] ?? []).prefix(100))
            for index in 0..<100 {
                let listener = Int64(10_000 + index % 37)
                late.append(Self.play("late\(index)", track: 2, listener: listener, at: hour(2)))
                truth.add("late\(index)", track: 2, listener: listener, at: hour(2))
            }
            try workspace.writeHour(hour(2), late, late: true)
            let incremental = try workspace.run()
            #expect(incremental.hours == 1)
            try Self.check(workspace, truth)

            // The same events again from one unpartitioned file over the whole range: nothing changes.
            let path = workspace.root + "/all.ndjson"
            try workspace.writeLines(lines.sorted { $0.key < $1.key }.flatMap(\.value) + late, to: path)
            _ = try workspace.run(paths: [path], from: hour(0), to: hour(6))
            try Self.check(workspace, truth)
        }
    }

    static func check(_ workspace: Workspace, _ truth: Truth) throws {
        let reader = try workspace.store.openReader()
        for track: Int64 in 1...4 {
            let answer = try reader.listeners(track: track, in: hours(0, 24))
            let exact = Int64(truth.listeners[track]?.count ?? 0)
            #expect(answer.plays.plays == truth.plays[track] ?? 0, "track \(track)")
            #expect(answer.playsWithoutListener == truth.withoutListener[track] ?? 0, "track \(track)")
            if exact <= 320 {
                #expect(answer.exact && answer.listeners == exact, "track \(track): \(answer.listeners) vs \(exact)")
            } else {
                #expect(!answer.exact && abs(Double(answer.listeners - exact)) <= 4 * 0.0163 * Double(exact), "track \(track): \(answer.listeners) vs \(exact)")
            }
        }
    }
}
