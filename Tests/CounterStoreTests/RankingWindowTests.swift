@testable import CounterStore
import CounterpointCore
import Patience
import PostgresDB
import PostgresTestServer
import SQLiteDB
import Testing

/// A reader's rankings reuse the realtime window they summed while the realtime rows are the
/// same, and only then: every flush and every compaction shows in the next ranking. Where the
/// store stamps its hours (SQLite), only the hours a change touched are read again.
@Suite("Rankings reuse the summed realtime window only while it is unchanged", .onTestThreads)
struct RankingWindowTests {
    /// `LayerReads` of a real store, counting the realtime window's rows read.
    final class CountingLayers: LayerReads {
        let base: any LayerReads
        var rowsRead = 0

        init(_ base: any LayerReads) { self.base = base }

        func beginSnapshots() throws -> SnapshotState { try base.beginSnapshots() }
        func endSnapshots() { base.endSnapshots() }
        func batchSum(_ subject: Subject, over part: RollupDecomposition) throws -> Int64 { try base.batchSum(subject, over: part) }
        func batchBuckets(_ subject: Subject, in span: RollupSpan, signal: Signal, _ visit: (Int64, Int64) -> Void) throws {
            try base.batchBuckets(subject, in: span, signal: signal, visit)
        }
        func batchCounts(_ subject: Subject, over part: RollupDecomposition) throws -> SignalCounts {
            try base.batchCounts(subject, over: part)
        }
        func batchRanked(_ kind: SubjectKind, level: RollupLevel, key: Int64, signal: Signal, after: RankedEntry?,
                         limit: Int) throws -> [RankedEntry] {
            try base.batchRanked(kind, level: level, key: key, signal: signal, after: after, limit: limit)
        }
        func realtimeSum(_ subject: Subject, over gaps: [HourRange]) throws -> Int64 { try base.realtimeSum(subject, over: gaps) }
        func realtimeHours(_ subject: Subject, in gap: HourRange, signal: Signal, _ visit: (Hour, Int64) -> Void) throws {
            try base.realtimeHours(subject, in: gap, signal: signal, visit)
        }
        func realtimeCounts(_ subject: Subject, over gaps: [HourRange]) throws -> SignalCounts {
            try base.realtimeCounts(subject, over: gaps)
        }
        func realtimeRows(_ kind: SubjectKind, in gap: HourRange, signal: Signal, _ visit: (Int64, Int64) -> Void) throws {
            try base.realtimeRows(kind, in: gap, signal: signal) { track, plays in
                rowsRead += 1
                visit(track, plays)
            }
        }
        func realtimeHourStamps(in gap: HourRange) throws -> [(hour: Int64, stamp: Int64)]? {
            try base.realtimeHourStamps(in: gap)
        }
        func batchDimensions(_ subject: Subject, over part: RollupDecomposition, _ visit: (UnsafeRawBufferPointer) throws -> Void) throws {
            try base.batchDimensions(subject, over: part, visit)
        }
        func realtimeDimensions(_ subject: Subject, over gaps: [HourRange], _ visit: (UnsafeRawBufferPointer) throws -> Void) throws {
            try base.realtimeDimensions(subject, over: gaps, visit)
        }
        func batchListeners(_ subject: Subject, over part: RollupDecomposition, _ visit: (Int64, UnsafeRawBufferPointer) throws -> Void) throws {
            try base.batchListeners(subject, over: part, visit)
        }
        func batchListenerBuckets(_ subject: Subject, in span: RollupSpan, _ visit: (Int64, Int64, UnsafeRawBufferPointer) throws -> Void) throws {
            try base.batchListenerBuckets(subject, in: span, visit)
        }
        func realtimeListeners(_ subject: Subject, in gap: HourRange, _ visit: (Hour, Int64, UnsafeRawBufferPointer) throws -> Void) throws {
            try base.realtimeListeners(subject, in: gap, visit)
        }
        func latestBatchHour() throws -> Hour? { try base.latestBatchHour() }
        func latestRealtimeHour(before: Hour) throws -> Hour? { try base.latestRealtimeHour(before: before) }
        func recentRuns(limit: Int) throws -> [BatchRun] { try base.recentRuns(limit: limit) }
        func partitions() throws -> [PartitionStatus] { try base.partitions() }
        func isReadable() -> Bool { base.isReadable() }
    }

    static func ranking(_ reader: CounterReader) throws -> [Int64: Int64] {
        Dictionary(uniqueKeysWithValues: try reader.top(in: hours(0, 24), limit: 10).map { ($0.id, $0.plays) })
    }

    @Test("a ranking after a flush or a compaction sees it; rankings in between read the window once", arguments: Backend.allCases)
    func rankingsFollowEveryChange(_ backend: Backend) throws {
        // On PostgreSQL the realtime version is the cluster's transaction snapshot, which other
        // suites' commits on the shared test server would move: a server of its own here.
        guard backend == .postgresql else { return try withStores(backend, Self.rankingsFollowEveryChange) }
        let server = try PostgresTestServer.startPrivate()
        defer { server.stop() }
        try Self.rankingsFollowEveryChange(TestStores(backend: .postgres(url: try server.makeDatabase())))
    }

    static func rankingsFollowEveryChange(_ stores: TestStores) throws {
        do {
            let realtime = try stores.realtime()
            let batch = try stores.batch()
            let layers = CountingLayers(try stores.backend.openLayers())
            let reader = try CounterReader(layers: layers)

            try flush(realtime, [(1, 1, 5), (2, 1, 3), (3, 2, 1)], from: nil, to: 1)
            #expect(try Self.ranking(reader) == [1: 5, 2: 3, 3: 1])
            #expect(try Self.ranking(reader) == [1: 5, 2: 3, 3: 1])
            #expect(layers.rowsRead == 3, "the unchanged window was read again")

            // The same flush time as before: the change itself must be seen, not the clock. Only
            // hour 2, the one it changed, is read again.
            try flush(realtime, [(3, 2, 10)], from: 1, to: 2)
            #expect(try Self.ranking(reader) == [1: 5, 2: 3, 3: 11])
            #expect(layers.rowsRead == 4)

            // Hour 1 batched (track 1 had 4 plays there, by the logs) and compacted away.
            try replace(batch, hours(1, 2), [(1, 1, 4)])
            #expect(try Self.ranking(reader) == [1: 4, 3: 11])
            #expect(try realtime.compactCoveredHours(maxRows: 100) == 2)
            #expect(try Self.ranking(reader) == [1: 4, 3: 11])
            try flush(realtime, [(2, 3, 7)], from: 2, to: 3)
            #expect(try Self.ranking(reader) == [1: 4, 2: 7, 3: 11])
        }
    }

    @Test("a ranking kept up to date hour by hour equals one summed afresh and the model, through flushes to any hour, batches and compactions",
          arguments: Backend.allCases)
    func windowKeptUpToDateEqualsAFreshOne(_ backend: Backend) throws {
        try withStores(backend) { stores in
            var random = SystemRandomNumberGenerator()
            let realtime = try stores.realtime()
            let batch = try stores.batch()
            let kept = try stores.reader()
            var realtimeModel: [Int64: [Int64: Int64]] = [:]  // hour → track → plays
            var batchModel: [Int64: [Int64: Int64]] = [:]
            var covered: Int64 = 0  // hours below are batched
            var offset: Int64 = 0
            for step in 0..<60 {
                if step % 15 == 14 {
                    // The batch covers one more hour (with counts of its own, as from the logs) and
                    // compaction removes it from the realtime layer, in two bites.
                    let rows = (0..<5).map { _ in (Int64.random(in: 1...30, using: &random), covered, Int64.random(in: 1...9, using: &random)) }
                    let summed = Dictionary(rows.map { ($0.0, $0.2) }, uniquingKeysWith: +)
                    _ = try replace(batch, hours(covered, covered + 1), summed.map { ($0.key, covered, $0.value) })
                    batchModel[covered] = summed
                    covered += 1
                    _ = try realtime.compactCoveredHours(maxRows: 3)
                    _ = try realtime.compactCoveredHours(maxRows: 1_000)
                } else {
                    // Mostly the latest hours, now and then a late event for an older one; every
                    // tenth flush writes to every hour so far.
                    let latest = Int64(step / 3)
                    let increments = (0..<Int.random(in: 1...12, using: &random)).map { index in
                        (Int64.random(in: 1...30, using: &random),
                         step % 10 == 5 ? Int64(index) % (latest + 1)
                             : Bool.random(using: &random) ? latest : Int64.random(in: 0...latest, using: &random),
                         Int64.random(in: 1...9, using: &random))
                    }
                    _ = try flush(realtime, increments, from: step == 0 ? nil : offset, to: offset + 1)
                    offset += 1
                    for (track, hour, plays) in increments { realtimeModel[hour, default: [:]][track, default: 0] += plays }
                }
                var model: [Int64: Int64] = [:]
                for counts in batchModel.values { for (track, plays) in counts { model[track, default: 0] += plays } }
                for (hour, counts) in realtimeModel where hour >= covered { for (track, plays) in counts { model[track, default: 0] += plays } }
                let expected = model.filter { $0.value > 0 }.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                    .prefix(8).map(\.key)
                let ranked = try kept.top(in: hours(0, 24), limit: 8)
                let afresh = try stores.reader().top(in: hours(0, 24), limit: 8)
                #expect(ranked == afresh, "step \(step)")
                #expect(ranked.map(\.id) == expected, "step \(step)")
                #expect(ranked.map(\.plays) == ranked.map { model[$0.id] ?? -1 }, "step \(step)")
            }
        }
    }

    @Test("changes a writer of an older version made without stamping hours show in the next ranking, and in every ranking until the hours are stamped again",
          arguments: Backend.allCases)
    func unstampedChangesAreReadInFull(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let realtime = try stores.realtime()
            let layers = CountingLayers(try stores.backend.openLayers())
            let reader = try CounterReader(layers: layers)
            let start: Int64 = 1_700_000_000_000
            try flush(realtime, [(1, 1, 5), (2, 2, 3)], from: nil, to: 1, at: start)
            #expect(try Self.ranking(reader) == [1: 5, 2: 3])

            try Self.commitAsAnOlderWriter(stores.backend, at: start)
            var before = layers.rowsRead
            #expect(try Self.ranking(reader) == [1: 5, 2: 13, 3: 4])
            #expect(layers.rowsRead - before == 3, "the whole window is read again")
            try flush(realtime, [(2, 2, 1)], from: 1, to: 2, at: start)
            before = layers.rowsRead
            #expect(try Self.ranking(reader) == [1: 5, 2: 14, 3: 4])
            #expect(layers.rowsRead - before == 3, "the whole window is read again")

            // SQLite's next flush stamps every hour again; on PostgreSQL, compaction does once the
            // older writer has been silent for 15 minutes and is forgotten.
            let later = start + 16 * 60_000
            try flush(realtime, [(1, 1, 1)], from: 2, to: 3, at: later)
            _ = try realtime.compactCoveredHours(maxRows: 100)
            #expect(try Self.ranking(reader) == [1: 6, 2: 14, 3: 4])
            before = layers.rowsRead
            try flush(realtime, [(3, 3, 1)], from: 3, to: 4, at: later)
            #expect(try Self.ranking(reader) == [1: 6, 2: 14, 3: 5])
            #expect(layers.rowsRead - before == 1, "only hour 3 is read again")
        }
    }

    /// What a writer from before the hour stamps commits: rows changed (10 more plays of track 2
    /// in hour 2, a new hour 3 with 4 plays of track 3) and counted as a change, no stamp.
    static func commitAsAnOlderWriter(_ backend: StoreBackend, at time: Int64) throws {
        let changes = """
            UPDATE realtime_counts SET plays = plays + 10 WHERE track_id = 2;
            INSERT INTO realtime_counts (hour, track_id, plays) VALUES (\(hour(3).index), 3, 4);
            """
        switch backend {
        case let .sqlite(location):
            try Database(path: location.realtimePath, mode: .readWrite).write { db in
                try db.execute(changes + "UPDATE last_flush SET changes = changes + 1 WHERE id = 1;")
            }
        case let .postgres(url):
            let connection = try PostgresConnection(url: url)
            try connection.write { db in
                try db.execute(changes + "INSERT INTO realtime_flushes (writer, flushed_at) VALUES ('an older writer', \(time));")
            }
        }
    }

    @Test("a window's totals from rows in runs of ascending tracks equal the sums of a model, whatever the runs", arguments: 0..<20)
    func windowTotalsEqualTheModel(_ round: Int) {
        var random = SystemRandomNumberGenerator()
        var model: [Int64: Int64] = [:]
        var totals = WindowTotals()
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            // One run: distinct tracks, ascending, as one hour's rows come from SQLite.
            let tracks = Set((0..<Int.random(in: 1...300, using: &random)).map { _ in Int64.random(in: 1...400, using: &random) }).sorted()
            for track in tracks {
                let plays = Int64.random(in: 0...9, using: &random)
                model[track, default: 0] += plays
                totals.add(track, plays)
            }
        }
        totals.finish()
        #expect(totals.entries.map(\.id) == model.keys.sorted())
        #expect(Dictionary(uniqueKeysWithValues: totals.entries.map { ($0.id, $0.plays) }) == model)
        for track in Int64(0)...401 {
            #expect(totals.plays(of: track) == model[track, default: 0])
        }
    }

    @Test("a store's realtime rows come in runs of strictly ascending tracks, and the window over several hours is exact", arguments: Backend.allCases)
    func realtimeRowsComeInRuns(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let realtime = try stores.realtime()
            // Tracks in descending order within and across hours, so that only the reads can sort them.
            let increments = (Int64(0)..<5).flatMap { hour in stride(from: Int64(60), through: 1, by: -1).map { ($0 * 7, hour, $0 + hour) } }
            try flush(realtime, increments, from: nil, to: 1)
            let layers = try stores.backend.openLayers()
            _ = try layers.beginSnapshots()
            defer { layers.endSnapshots() }
            var rows: [(Int64, Int64)] = []
            try layers.realtimeRows(.track, in: hours(0, 5), signal: .plays) { rows.append(($0, $1)) }
            var runs = 1
            for index in rows.indices.dropFirst() where rows[index].0 <= rows[index - 1].0 { runs += 1 }
            #expect(runs <= 5, "\(runs) runs for 5 hours")
            var totals = WindowTotals()
            for (track, plays) in rows { totals.add(track, plays) }
            totals.finish()
            let expected = Dictionary(increments.map { ($0.0, $0.2) }, uniquingKeysWith: +)
            #expect(Dictionary(uniqueKeysWithValues: totals.entries.map { ($0.id, $0.plays) }) == expected)
        }
    }
}
