import CounterStore
import CounterpointCore
import Patience
import Testing

@Suite("Realtime store", .onTestThreads)
struct RealtimeStoreTests {
    @Test("a flush commits counts, offsets and the flush time together", arguments: Backend.allCases)
    func flushCommits(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.realtime()
            let outcome = try flush(store, [(1, 10, 3), (2, 10, 1), (1, 11, 4)], from: nil, to: 50, highWatermark: 80, at: 1_234)
            #expect(outcome == .committed)
            #expect(try store.storedOffsets(topic: "plays") == [0: 50])
            #expect(try store.storedOffsets(topic: "other").isEmpty)

            let reader = try stores.reader()
            #expect(try reader.plays(track: 1, in: .allTime).realtimePlays == 7)
            #expect(try reader.plays(track: 2, in: .allTime).realtimePlays == 1)
            #expect(try reader.freshness() == Freshness(batchCoveredUntil: nil, realtimeFlushedAt: 1_234, realtimeLagEvents: 30))
            #expect(try reader.partitions() == [PartitionStatus(topic: "plays", partition: 0, nextOffset: 50, highWatermark: 80)])
        }
    }

    @Test("flushes add up on the same (track, hour), including repeats within one flush", arguments: Backend.allCases)
    func flushesAddUp(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.realtime()
            try flush(store, [(1, 10, 3), (1, 10, 2)], from: nil, to: 5)
            try flush(store, [(1, 10, 4)], from: 5, to: 9)
            let reader = try stores.reader()
            #expect(try reader.plays(track: 1, in: hours(10, 11)).plays == 9)
        }
    }

    @Test("a flush with a stale start offset is fenced and applies nothing", arguments: Backend.allCases)
    func fencing(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.realtime()
            try flush(store, [(1, 10, 3)], from: nil, to: 50, at: 1_000)

            // Another consumer believes nothing was stored yet, or that it stopped elsewhere.
            #expect(try flush(store, [(1, 10, 100)], from: nil, to: 70, at: 2_000) == .fenced(partitions: [0]))
            #expect(try flush(store, [(1, 10, 100)], from: 40, to: 70, at: 2_000) == .fenced(partitions: [0]))

            // One stale partition fences the whole flush, the current one included.
            let mixed = try store.apply(
                increments: [CountRow(id: 1, hour: hour(10), plays: 100)],
                progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: 50, nextOffset: 60, highWatermark: nil),
                           PartitionProgress(topic: "plays", partition: 1, startOffset: 7, nextOffset: 9, highWatermark: nil)],
                flushedAt: 2_000)
            #expect(mixed == .fenced(partitions: [1]))

            #expect(try store.storedOffsets(topic: "plays") == [0: 50])
            let reader = try stores.reader()
            #expect(try reader.plays(track: 1, in: .allTime).plays == 3)
            #expect(try reader.freshness().realtimeFlushedAt == 1_000)

            // The consumer that holds the stored offset goes on.
            #expect(try flush(store, [(1, 10, 1)], from: 50, to: 60, at: 3_000) == .committed)
            #expect(try reader.plays(track: 1, in: .allTime).plays == 4)
        }
    }

    @Test("an increment with negative plays is refused and nothing of the flush is applied", arguments: Backend.allCases)
    func invalidIncrement(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let store = try stores.realtime()
            #expect(throws: CounterStoreError.self) {
                try flush(store, [(1, 10, 3), (2, 10, -1)], from: nil, to: 50)
            }
            #expect(try store.storedOffsets(topic: "plays").isEmpty)
            #expect(try stores.reader().plays(track: 1, in: .allTime).plays == 0)
        }
    }

    @Test("compaction deletes realtime rows of covered hours only, and answers do not change", arguments: Backend.allCases)
    func compaction(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let realtime = try stores.realtime()
            try flush(realtime, [(1, 1, 1), (1, 2, 2), (2, 2, 5), (1, 30, 3), (1, 47, 4)], from: nil, to: 10)
            let reader = try stores.reader()
            let batch = try stores.batch()
            try replace(batch, hours(0, 24), [(1, 2, 6)])
            let before = try reader.timeline(track: 1, in: hours(0, 48), step: .hour)

            #expect(try realtime.compactCoveredHours(maxRows: 1_000) == 3)
            #expect(try realtime.compactCoveredHours(maxRows: 1_000) == 0)
            #expect(try reader.timeline(track: 1, in: hours(0, 48), step: .hour) == before)
            #expect(try reader.plays(track: 1, in: .allTime) == TrackPlays(id: 1, batchPlays: 6, realtimePlays: 7))
        }
    }

    @Test("compaction works through a long covered range a bounded number of rows at a time", arguments: Backend.allCases)
    func longCompaction(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let realtime = try stores.realtime()
            // Three tracks in every hour of ten days.
            let increments = (0..<Int64(24 * 10)).flatMap { hour in (1...3).map { (Int64($0), hour, Int64(1)) } }
            try flush(realtime, increments, from: nil, to: 1)
            let covered = Coverage([hours(5, 24 * 9 + 3)])
            try replace(try stores.batch(), hours(5, 24 * 9 + 3), [])
            let coveredRows = 3 * (24 * 9 + 3 - 5)
            var deleted: [Int] = []
            while deleted.last != 0 {
                deleted.append(try realtime.compactCoveredHours(maxRows: 100))
            }
            #expect(deleted.dropLast(2).allSatisfy { $0 == 100 })
            #expect(deleted.reduce(0, +) == coveredRows)
            let reader = try stores.reader()
            #expect(try reader.plays(track: 1, in: .allTime).plays == 240 - (24 * 9 + 3 - 5))
            #expect(try reader.timeline(track: 2, in: hours(0, 240), step: .hour).map(\.count)
                    == (0..<240).map { covered.contains(hour(Int64($0))) ? 0 : 1 })
        }
    }

    @Test("compaction of an explicit coverage deletes oldest first (SQLite)")
    func compactionOldestFirst() throws {
        try withStoreLocation { location in
            let realtime = try SQLiteRealtimeStore(location: location)
            try flush(realtime, (0..<Int64(10)).map { (1, $0, 1) }, from: nil, to: 1)
            #expect(try realtime.compact(coverage: Coverage([hours(0, 10)]), maxRows: 4) == 4)
            let reader = try StoreBackend.sqlite(location).openReader()
            #expect(try reader.timeline(track: 1, in: hours(0, 10), step: .hour).map(\.count) == [0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
        }
    }

    @Test("compactCoveredHours follows the batch store's coverage", arguments: Backend.allCases)
    func compactionFollowsBatchCoverage(_ backend: Backend) throws {
        try withStores(backend) { stores in
            let realtime = try stores.realtime()
            try flush(realtime, [(1, 1, 1), (1, 30, 3)], from: nil, to: 10)
            #expect(try realtime.compactCoveredHours(maxRows: 1_000) == 0)
            try replace(try stores.batch(), hours(0, 24), [(1, 1, 9)])
            #expect(try realtime.compactCoveredHours(maxRows: 1_000) == 1)
            #expect(try stores.reader().plays(track: 1, in: .allTime)
                    == TrackPlays(id: 1, batchPlays: 9, realtimePlays: 3))
        }
    }
}
