import CounterStore
import CounterpointCore
import Foundation
import Patience
import Runtime
import Testing

@Suite("Batch store", .onTestThreads)
struct BatchStoreTests {
    /// Every (track, hour) → plays the batch layer holds for `tracks` over `range`, via the reader.
    func snapshot(_ reader: CounterReader, tracks: ClosedRange<Int64>, _ range: HourRange) throws -> [Int64: [TimelinePoint]] {
        var result: [Int64: [TimelinePoint]] = [:]
        for track in tracks { result[track] = try reader.timeline(track: track, in: range, step: .hour) }
        return result
    }

    @Test("a rerun of the same batch gives identical rows", arguments: Backend.allCases)
    func rerunIdentical(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            let rows: [(Int64, Int64, Int64)] = (1...50).flatMap { track in (0..<24).map { (track, $0, track * 100 + $0 + 1) } }
            try replace(store, hours(0, 24), rows)
            let reader = try stores.reader()
            let first = try snapshot(reader, tracks: 1...51, hours(0, 24))
            try replace(store, hours(0, 24), rows.reversed())
            #expect(try snapshot(reader, tracks: 1...51, hours(0, 24)) == first)
            #expect(try reader.plays(track: 7, in: .allTime).batchPlays == (0..<24).reduce(0) { $0 + 701 + $1 })
        }
    }

    @Test("a rerun replaces the rows of its hours: changed rows change, missing rows go, other hours stay", arguments: Backend.allCases)
    func rerunReplaces(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            try replace(store, hours(0, 24), [(1, 0, 5), (1, 23, 6), (2, 5, 7), (3, 10, 8)])
            try replace(store, hours(24, 48), [(1, 24, 9), (2, 30, 10)])
            // Rerun of the first day: track 1 changed, track 2 gone, track 4 new, track 3 unchanged.
            try replace(store, hours(0, 24), [(1, 0, 50), (3, 10, 8), (4, 12, 1)])

            let reader = try stores.reader()
            #expect(try reader.plays(track: 1, in: hours(0, 24)).plays == 50)
            #expect(try reader.plays(track: 2, in: hours(0, 24)).plays == 0)
            #expect(try reader.plays(track: 3, in: hours(0, 24)).plays == 8)
            #expect(try reader.plays(track: 4, in: hours(0, 24)).plays == 1)
            #expect(try reader.plays(track: 1, in: hours(24, 48)).plays == 9)
            #expect(try reader.plays(track: 2, in: hours(24, 48)).plays == 10)
            #expect(try store.coverage() == Coverage([hours(0, 48)]))
        }
    }

    @Test("rows of one (track, hour) written several times add up, also across sort buffers", arguments: Backend.allCases)
    func duplicateRowsAddUp(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch(sortBufferRows: 3)
            try replace(store, hours(0, 24), [(1, 0, 1), (2, 0, 1), (1, 0, 2), (3, 0, 1), (1, 0, 4), (1, 1, 0)])
            let reader = try stores.reader()
            #expect(try reader.plays(track: 1, in: .allTime).plays == 7)
            // A rerun through small buffers overwrites the old rows rather than adding to them.
            try replace(store, hours(0, 24), [(1, 0, 1), (2, 0, 1), (1, 0, 1), (3, 0, 1)])
            #expect(try reader.plays(track: 1, in: .allTime).plays == 2)
            #expect(try reader.plays(tracks: [1, 2, 3], in: .allTime).map(\.plays) == [2, 1, 1])
        }
    }

    @Test("many rows of one (track, hour) add up when written in groups, and a rerun overwrites them", arguments: Backend.allCases)
    func duplicateRowsInGroups(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            let rows = (0..<300).map { index in (Int64(index % 3 + 1), Int64(index % 2), Int64(1)) }
            try replace(store, hours(0, 24), rows)
            let reader = try stores.reader()
            #expect(try reader.plays(tracks: [1, 2, 3], in: .allTime).map(\.plays) == [100, 100, 100])
            #expect(try reader.timeline(track: 1, in: hours(0, 2), step: .hour).map(\.count) == [50, 50])
            try replace(store, hours(0, 24), rows)
            #expect(try reader.plays(tracks: [1, 2, 3], in: .allTime).map(\.plays) == [100, 100, 100])
        }
    }

    @Test("a row outside the replaced range fails the run and changes nothing", arguments: Backend.allCases)
    func rowOutsideRange(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            try replace(store, hours(0, 24), [(1, 3, 5)])
            let error = try #require(throws: CounterStoreError.self) {
                try replace(store, hours(0, 24), [(1, 3, 99), (1, 24, 1)])
            }
            #expect(error == .rowOutsideRange(.track(1), hour: hour(24), range: hours(0, 24)))
            #expect(try store.coverage() == Coverage([hours(0, 24)]))
            #expect(try store.recentRuns(limit: 10).count == 1)
            #expect(try stores.reader().plays(track: 1, in: .allTime).plays == 5)
        }
    }

    @Test("an empty range is refused", arguments: Backend.allCases)
    func emptyRange(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            #expect(throws: CounterStoreError.emptyRange(hours(5, 5))) { try replace(store, hours(5, 5), []) }
        }
    }

    @Test("runs are recorded newest first with their figures and rejection reasons", arguments: Backend.allCases)
    func runsRecorded(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            let first = try replace(store, hours(0, 24), [(1, 3, 5)])
            var run = batchRun(hours(24, 48), rows: 2)
            run.rejectedByReason = ["missing_field": 2, "too_large": 1]
            run.rejected = 3
            let second = try store.replace(range: hours(24, 48), run: run) { writer in
                try writer.write(trackID: 1, hour: hour(30), plays: 1)
            }
            #expect(second.id > first.id)
            let runs = try store.recentRuns(limit: 10)
            #expect(runs == [second, first])
            #expect(runs[0].rejectedByReason == ["missing_field": 2, "too_large": 1])
            #expect(runs[0].range == hours(24, 48))
            #expect(try store.recentRuns(limit: 1) == [second])
            #expect(try stores.reader().recentRuns(limit: 5) == runs)
        }
    }

    @Test("coverage keeps disjoint ranges apart and merges touching ones", arguments: Backend.allCases)
    func coverageRanges(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            try replace(store, hours(0, 10), [])
            try replace(store, hours(20, 30), [])
            #expect(try store.coverage() == Coverage([hours(0, 10), hours(20, 30)]))
            try replace(store, hours(10, 20), [])
            #expect(try store.coverage().ranges == [hours(0, 30)])
            #expect(try stores.reader().freshness().batchCoveredUntil == hour(30))
        }
    }

    @Test("a reader on another connection sees the old counts or the new ones, never a mix, while a run commits", arguments: Backend.allCases)
    func atomicAgainstConcurrentReader(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            let realtime = try stores.realtime()
            let tracks = Int64(1)...Int64(400)
            // Old: 1 play per (track, hour) over 0..<12 from the batch; realtime counts 0..<24 at 5 each.
            try replace(store, hours(0, 12), tracks.flatMap { track in (0..<12).map { (track, $0, Int64(1)) } })
            try flush(realtime, tracks.flatMap { track in (0..<24).map { (track, $0, Int64(5)) } }, from: nil, to: 1)
            let tracksCount = Int64(tracks.count)
            let oldTotal = tracksCount * 12 * 1 + tracksCount * 12 * 5
            // New: the run covers 0..<24 with 2 plays per (track, hour).
            let newTotal = tracksCount * 24 * 2

            let observations = ObservationLog()
            _ = BlockingThread(name: "test-reader") {
                do {
                    let reader = try stores.reader()
                    while !observations.isStopped {
                        let total = try reader.top(in: hours(0, 24), limit: 1_000).reduce(0) { $0 + $1.plays }
                        let perTrack = try reader.plays(tracks: [1, 200, 400], in: hours(0, 24)).map(\.plays)
                        observations.record(totals: [total], perTrack: perTrack)
                    }
                } catch {
                    observations.fail(error)
                }
                observations.finish()
            }
            observations.waitForAtLeast(observationCount: 1)
            for _ in 0..<3 {
                try replace(store, hours(0, 24), tracks.flatMap { track in (0..<24).map { (track, $0, Int64(2)) } })
            }
            observations.waitForAtLeast(observationCount: 20)
            observations.stop()
            observations.waitUntilFinished()

            #expect(observations.error == nil)
            #expect(observations.count >= 20)
            #expect(observations.totals.allSatisfy { $0 == oldTotal || $0 == newTotal })
            #expect(observations.perTrack.allSatisfy { $0 == [72, 72, 72] || $0 == [48, 48, 48] })
            let reader = try stores.reader()
            #expect(try reader.top(in: hours(0, 24), limit: 1_000).reduce(0) { $0 + $1.plays } == newTotal)
        }
    }
}

/// What the reader thread saw, shared with the test's thread.
private final class ObservationLog: Sendable {
    private struct State {
        var stopped = false
        var finished = false
        var totals: [Int64] = []
        var perTrack: [[Int64]] = []
        var error: (any Error)?
    }

    private let state = Locked(State())

    var count: Int { state.withLock { $0.totals.count } }
    var isStopped: Bool { state.withLock { $0.stopped } }
    var totals: [Int64] { state.withLock { $0.totals } }
    var perTrack: [[Int64]] { state.withLock { $0.perTrack } }
    var error: (any Error)? { state.withLock { $0.error } }

    func record(totals newTotals: [Int64], perTrack newPerTrack: [Int64]) {
        state.withLock {
            $0.totals += newTotals
            $0.perTrack.append(newPerTrack)
        }
    }

    func fail(_ error: any Error) { state.withLock { $0.error = error } }
    func stop() { state.withLock { $0.stopped = true } }
    func finish() { state.withLock { $0.finished = true } }

    func waitForAtLeast(observationCount: Int) {
        state.wait(until: { $0.totals.count >= observationCount || $0.finished }) { _ in }
    }

    func waitUntilFinished() {
        state.wait(until: \.finished) { _ in }
    }
}

@Suite("Batch store: recorded sources", .onTestThreads)
struct HourSourcesTests {
    @Test("what each hour was computed from is recorded with its rows, and a later run overwrites it", arguments: Backend.allCases)
    func sourcesRecorded(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.batch()
            let run = BatchRun(range: hours(0, 2), startedAt: 1, finishedAt: 2, eventsRead: 0, valid: 0, duplicates: 0,
                               rejected: 0, rejectedByReason: [:], tracks: 0, rows: 0)
            let first = [HourSource(hour: hour(0), fingerprint: "a", files: 1, bytes: 10),
                         HourSource(hour: hour(1), fingerprint: "b", files: 2, bytes: 20)]
            try store.replace(ranges: [hours(0, 2)], startedAt: 1, sources: first) { _ in run }
            #expect(try store.hourSources() == [hour(0): first[0], hour(1): first[1]])
            let again = HourSource(hour: hour(1), fingerprint: "c", files: 3, bytes: 30)
            try store.replace(ranges: [hours(1, 2)], startedAt: 1, sources: [again]) { _ in run }
            #expect(try store.hourSources() == [hour(0): first[0], hour(1): again])
        }
    }
}
