@testable import CounterStore
import CounterpointCore
import Foundation
import Patience
import PostgresDB
import PostgresTestServer
import Runtime
import Testing

/// What only the PostgreSQL backend has: several writer processes on one database, a server
/// that restarts under a running writer and reader, and the schema version table.
@Suite("PostgreSQL store", .onTestThreads)
struct PostgresStoreTests {
    @Test("two writers flushing the same partition at once count every increment exactly once")
    func fencingBetweenWriters() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        let rounds = 150
        let committed = Counter()
        let failures = Counter()
        onThreads(2) { _ in
            do {
                // Each thread is a consumer with its own connection, racing the other for partition 0.
                let store = try PostgresRealtimeStore(url: url)
                for _ in 0..<rounds {
                    let stored = try store.storedOffsets(topic: "plays")[0]
                    let next = (stored ?? 0) + 1
                    let outcome = try store.apply(
                        increments: [CountRow(id: 1, hour: hour(3), plays: 1), CountRow(id: 2, hour: hour(4), plays: 2)],
                        progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: stored, nextOffset: next, highWatermark: nil)],
                        flushedAt: next)
                    if outcome == .committed { committed.add() }
                }
            } catch {
                failures.add()
            }
        }
        #expect(failures.value == 0)
        let stores = TestStores(backend: .postgres(url: url))
        let offset = try stores.realtime().storedOffsets(topic: "plays")[0]
        #expect(offset == Int64(committed.value))
        #expect(committed.value > 0)
        let reader = try stores.reader()
        #expect(try reader.plays(track: 1, in: .allTime).plays == Int64(committed.value))
        #expect(try reader.plays(track: 2, in: .allTime).plays == 2 * Int64(committed.value))
    }

    @Test("a server restart fails the next flush with a connection error and its retry counts once; the next read reconnects at once")
    func serverRestart() throws {
        let server = try PostgresTestServer.startPrivate()
        defer { server.stop() }
        let url = try server.makeDatabase()
        let writer = try PostgresRealtimeStore(url: url)
        let reader = try CounterReader(layers: PostgresLayers(url: url))
        try flush(writer, [(1, 10, 5)], from: nil, to: 1)
        #expect(try reader.plays(track: 1, in: .allTime).plays == 5)

        try server.restart()
        let flushError = try #require(throws: PostgresError.self) { try flush(writer, [(1, 10, 7)], from: 1, to: 2) }
        #expect(flushError.kind == .connection)
        #expect((flushError as any StoreFailure).failureKind == .unreachable)
        // A read's snapshot starts on a fresh connection when the idle one was lost: no error.
        #expect(try reader.plays(track: 1, in: .allTime).plays == 5)

        // The consumer retries the same flush: it was not committed, so it commits now, once.
        #expect(try flush(writer, [(1, 10, 7)], from: 1, to: 2) == .committed)
        #expect(try flush(writer, [(1, 10, 7)], from: 1, to: 2) == .fenced(partitions: [0]))
        #expect(try reader.plays(track: 1, in: .allTime).plays == 12)
        #expect(try writer.storedOffsets(topic: "plays") == [0: 2])
    }

    @Test("the schema is created at its version by processes opening an empty database at once")
    func migrationVersion() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        let failures = Counter()
        onThreads(4) { index in
            do {
                switch index % 3 {
                case 0: _ = try PostgresRealtimeStore(url: url)
                case 1: _ = try PostgresBatchStore(url: url)
                default: _ = try PostgresLayers(url: url)
                }
            } catch {
                failures.add()
            }
        }
        #expect(failures.value == 0)
        let connection = try PostgresConnection(url: url)
        #expect(try PostgresSchema.currentVersion(connection) == PostgresSchema.version)
        #expect(PostgresSchema.version == 7)
    }

    @Test("a database with a newer schema version than this program knows is refused")
    func schemaTooNew() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        _ = try PostgresBatchStore(url: url)
        try PostgresConnection(url: url).execute("UPDATE counterpoint_schema SET version = 9")
        let error = try #require(throws: CounterStoreError.self) { try PostgresRealtimeStore(url: url) }
        guard case let .schemaTooNew(_, found, supported) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(found == 9 && supported == PostgresSchema.version)
    }

    @Test("--store picks SQLite when empty, PostgreSQL for its URIs, and refuses anything else")
    func storeBackendParsing() throws {
        #expect(try StoreBackend(store: nil, dataDirectory: "/d") == .sqlite(StoreLocation(directory: "/d")))
        #expect(try StoreBackend(store: " ", dataDirectory: "/d") == .sqlite(StoreLocation(directory: "/d")))
        #expect(try StoreBackend(store: "postgresql://u@h/db", dataDirectory: "/d") == .postgres(url: "postgresql://u@h/db"))
        #expect(try StoreBackend(store: "postgres://u:pw@h:5433/db?sslmode=disable", dataDirectory: "/d").description
                == "postgres://u:***@h:5433/db?sslmode=disable")
        #expect(throws: CounterStoreError.unsupportedStore("mysql://h/db")) {
            try StoreBackend(store: "mysql://h/db", dataDirectory: "/d")
        }
    }

    @Test("an unreachable database fails opening with one line")
    func unreachable() throws {
        let backend = try StoreBackend(store: "postgresql://counter:pw@127.0.0.1:1/counts?connect_timeout=2", dataDirectory: "/d")
        for open in [{ _ = try backend.openRealtimeWriter() }, { _ = try backend.openBatchWriter() },
                     { _ = try backend.openReader() }] as [() throws -> Void] {
            let error = try #require(throws: PostgresError.self) { try open() }
            #expect(error.kind == .connection)
            #expect(!"\(error)".contains("\n"))
        }
    }
}

/// A counter shared by test threads.
final class Counter: Sendable {
    private let count = Locked(0)

    var value: Int { count.value }
    func add() { count.withLock { $0 += 1 } }
}

@Suite("SQLite to PostgreSQL copy", .onTestThreads)
struct StoreCopyTests {
    /// The other signals of a row, from its key: likes that net −1, 0 or +1, a repost every
    /// other hour, comments on some tracks.
    static func otherSignals(_ track: Int64, _ hour: Int64, plays: Int64) -> SignalCounts {
        var counts = SignalCounts(plays: plays)
        counts.likes = track % 3 - 1
        counts.reposts = hour % 2
        counts.comments = track % 5 == 0 ? 2 : 0
        return counts
    }

    @Test("a copied store answers every query as the SQLite store did, every signal too, and consumption resumes from its offsets")
    func copyAnswersAlike() throws {
        /// `plays` plays of `track` in hour `offset`, with positions, clients and countries (some missing).
        func plays(_ track: Int64, _ offset: Int64, _ plays: Int64) -> [(track: Int64, hour: Int64, play: DimensionStoreTests.Play)] {
            (0..<plays).map { index in
                (track, hour(offset).index, DimensionStoreTests.Play(
                    bucket: index == 2 ? nil : Int8((track * 7 + offset + index) % 100), client: ["ios", "web", nil][Int(index % 3)],
                    country: track % 4 == 0 ? nil : ["DE", "SE", "é"][Int((track + offset) % 3)]))
            }
        }
        try withStoreLocation { location in
            let realtime = try SQLiteRealtimeStore(location: location)
            let (increments, dimensions) = DimensionStoreTests.rows((1...Int64(40)).flatMap { track in
                (0..<Int64(60)).flatMap { plays(track, $0, track % 5 + 1) }
            })
            let withSignals = increments.map { CountRow(id: $0.id, hour: $0.hour, counts: Self.otherSignals($0.id, $0.hour.index, plays: $0.plays)) }
            #expect(try realtime.apply(increments: withSignals, dimensions: dimensions, progress: [
                PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 77, highWatermark: 90),
            ], flushedAt: 4_000) == .committed)
            let batch = try SQLiteBatchStore(location: location)
            let (rows, blobs) = DimensionStoreTests.rows((1...Int64(40)).flatMap { track in
                (0..<Int64(30)).flatMap { plays(track, $0, track % 3 + 2) }
            })
            try batch.replace(range: hours(0, 30), run: batchRun(hours(0, 30), rows: rows.count)) { writer in
                let byKey = Dictionary(uniqueKeysWithValues: blobs.map { ("\($0.id)/\($0.hour.index)", $0.encoded) })
                for row in rows {
                    try writer.write(trackID: row.id, hour: row.hour, counts: Self.otherSignals(row.id, row.hour.index + 1, plays: row.plays),
                                     dimensions: byKey["\(row.id)/\(row.hour.index)"] ?? [])
                }
            }
            _ = try realtime.compactCoveredHours(maxRows: 100_000)
            let source = try StoreBackend.sqlite(location).openReader()

            let url = try PostgresTestServer.shared().makeDatabase()
            var heard: [StoreCopy.Progress] = []
            let summary = try StoreCopy.copy(from: location, toPostgres: url) { heard.append($0) }
            #expect(summary.batchRows == 40 * 30)
            #expect(heard.last == StoreCopy.Progress(batchRows: 40 * 30, batchRowsInAll: 40 * 30))
            #expect(summary.realtimeRows == 40 * 30)
            #expect(summary.partitions == 1)
            let copy = try StoreBackend.postgres(url: url).openReader()
            for range in [HourRange.allTime, hours(10, 40), hours(29, 31)] {
                #expect(try copy.plays(tracks: Array(1...41), in: range) == source.plays(tracks: Array(1...41), in: range))
                #expect(try copy.top(in: range, limit: 10) == source.top(in: range, limit: 10))
            }
            #expect(try copy.timeline(track: 7, in: hours(0, 72), step: .day) == source.timeline(track: 7, in: hours(0, 72), step: .day))
            for range in [HourRange.allTime, hours(10, 40), hours(29, 31)] {
                for track in [2, 5, 10, 40] as [Int64] {
                    let counts = try copy.counts(track: track, in: range)
                    #expect(counts == (try source.counts(track: track, in: range)), "track \(track), \(range)")
                    #expect(range != .allTime || counts.total.likes != 0 || track % 3 == 1, "the signals were copied")
                }
                for signal in [Signal.likes, .reposts, .comments] {
                    #expect(try copy.top(in: range, limit: 10, signal: signal) == source.top(in: range, limit: 10, signal: signal))
                    #expect(try copy.timeline(track: 5, in: hours(0, 72), step: .hour, signal: signal)
                        == source.timeline(track: 5, in: hours(0, 72), step: .hour, signal: signal))
                }
            }
            #expect(try copy.freshness() == source.freshness())
            // Waveforms and breakdowns: the blobs of both layers and the rebuilt rollups.
            for track in [1, 4, 7, 40, 41] as [Int64] {
                for range in [HourRange.allTime, hours(10, 40), hours(29, 31), hours(0, 24 * 40)] {
                    let answer = try copy.dimensions(track: track, in: range)
                    #expect(answer == (try source.dimensions(track: track, in: range)), "track \(track), \(range)")
                    #expect(track == 41 || answer.totals.countries.count > 0 || track % 4 == 0)
                }
            }
            #expect(try PostgresRealtimeStore(url: url).storedOffsets(topic: "plays") == [0: 77])

            // A second copy into the same database is refused and changes nothing.
            #expect(throws: CounterStoreError.self) { try StoreCopy.copy(from: location, toPostgres: url) }
            #expect(try copy.plays(track: 1, in: .allTime) == source.plays(track: 1, in: .allTime))
        }
    }
}
