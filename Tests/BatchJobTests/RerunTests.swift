import BatchJob
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("BatchJob reruns and failures", .onTestThreads)
struct RerunTests {
    /// Hours 10, 11 and 12, closed: tracks 1–3 with a few plays each.
    private func writeThreeHours(_ workspace: Workspace) throws {
        for offset: Int64 in 10...12 {
            let at = hour(offset)
            try workspace.writeHour(at, [
                play("a\(offset)", track: 1, at: at), play("b\(offset)", track: 1, at: at),
                play("c\(offset)", track: 2, at: at), play("d\(offset)", track: 3, at: at),
                play("a\(offset)", track: 1, at: at),
            ])
            try workspace.close(at)
        }
    }

    @Test("a rerun with --all over the same logs gives identical rows and summary counts", arguments: StoreKind.allCases)
    func rerunIsIdentical(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            let first = try workspace.run()
            let rowsAfterFirst = try workspace.counts(in: hours(0, 24))
            let second = try workspace.run(all: true)

            #expect(second.counts == first.counts)
            #expect(try workspace.counts(in: hours(0, 24)) == rowsAfterFirst)
            #expect(rowsAfterFirst.count == 9)
            #expect(rowsAfterFirst[Cell(track: 1, hour: hour(11))] == 2)
            #expect(try workspace.runs().count == 2)
        }
    }

    @Test("a run over a sub-range replaces only those hours; an hour that lost all its events answers 0", arguments: StoreKind.allCases)
    func subRangeReplacesOnlyItsHours(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            _ = try workspace.run()
            let before = try workspace.counts(in: hours(0, 24))

            // New logs: hour 11 has lost every event; hour 12 changes but is outside the rerun.
            try FileManager.default.removeItem(atPath: LogLayout.hourFilePath(root: workspace.logs, hour: hour(11)))
            try workspace.writeHour(hour(12), [play("z", track: 9, at: hour(12))])
            let summary = try workspace.run(from: hour(11), to: hour(12))

            #expect(summary.rows == 0)
            #expect(summary.hours == 1)
            let after = try workspace.counts(in: hours(0, 24))
            #expect(after.filter { $0.key.hour == hour(11) }.isEmpty)
            #expect(after.filter { $0.key.hour != hour(11) } == before.filter { $0.key.hour != hour(11) })
            #expect(try workspace.plays(1, at: hour(11)) == 0)
            #expect(try workspace.coverage() == Coverage([hours(10, 13)]))
        }
    }

    @Test("a rerun drops rows of tracks that no longer have plays in a rebuilt hour", arguments: StoreKind.allCases)
    func rerunDropsVanishedTracks(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            _ = try workspace.run()
            try workspace.writeHour(hour(10), [play("only", track: 2, at: hour(10))])
            _ = try workspace.run(from: hour(10), to: hour(11))

            #expect(try workspace.counts(in: hours(10, 11)) == [Cell(track: 2, hour: hour(10)): 1])
            #expect(try workspace.plays(1, at: hour(11)) == 2)
        }
    }

    @Test("a corrupt or truncated gzip file, of one hour or unpartitioned, fails the run and leaves the previous rows and coverage as they were",
          arguments: StoreKind.allCases, [(GzipDamage.garbage, true), (.garbage, false), (.truncated, true), (.truncated, false)])
    func corruptGzipChangesNothing(_ store: StoreKind, damage: (GzipDamage, Bool)) throws {
        let (damage, unpartitioned) = damage
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            _ = try workspace.run()
            let rowsBefore = try workspace.counts(in: hours(0, 24))
            let runsBefore = try workspace.runs()

            // New plays in hour 10 plus one damaged gzip file in hour 11.
            try workspace.writeHour(hour(10), [play("new", track: 5, at: hour(10))], segment: "more")
            let damaged = unpartitioned ? workspace.logs + "/dump/events.ndjson.gz"
                : LogLayout.hourFilePath(root: workspace.logs, hour: hour(11), segment: "broken", gzip: true)
            try workspace.writeRaw(try damage.bytes(workspace), to: damaged)

            #expect(throws: EventLogError.self) {
                try workspace.run(from: hour(10), to: hour(14))
            }
            #expect(try workspace.counts(in: hours(0, 24)) == rowsBefore)
            #expect(try workspace.coverage() == Coverage([hours(10, 13)]))
            #expect(try workspace.runs() == runsBefore)
            #expect(try workspace.stagingLeftovers().isEmpty)
        }
    }

    @Test("a missing log path throws before anything is written", arguments: StoreKind.allCases)
    func missingPathThrowsFirst(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            #expect(throws: EventLogError.self) {
                try workspace.run(paths: [workspace.logs, workspace.root + "/no-such-dir"])
            }
            #expect(try !workspace.batchLayerWritten())

            // Also with earlier runs in the store: nothing changes.
            _ = try workspace.run()
            let runsBefore = try workspace.runs()
            #expect(throws: EventLogError.self) {
                try workspace.run(paths: [workspace.logs, workspace.root + "/missing.ndjson"])
            }
            #expect(try workspace.runs() == runsBefore)
        }
    }
}

enum GzipDamage: CustomStringConvertible, Sendable {
    /// A gzip header followed by bytes that are not deflate data.
    case garbage
    /// A valid gzip file cut in the middle of its member.
    case truncated

    var description: String { self == .garbage ? "garbage after the header" : "truncated member" }

    func bytes(_ workspace: Workspace) throws -> [UInt8] {
        switch self {
        case .garbage:
            return [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 3] + Array(repeating: 0xFF, count: 64) + Array("tail".utf8)
        case .truncated:
            let scratch = workspace.root + "/whole.ndjson.gz"
            let lines = (0..<200).map { play("t\($0)", track: 4, at: hour(11)) }
            // One member for all lines, so that cutting it in half leaves an unfinished member.
            let writer = try LogWriter(path: scratch, gzip: true, append: false)
            for line in lines { try writer.write(line: Array(line.utf8)) }
            try writer.close()
            let whole = try Array(Data(contentsOf: URL(fileURLWithPath: scratch)))
            try FileManager.default.removeItem(atPath: scratch)
            return Array(whole.prefix(whole.count / 2))
        }
    }
}
