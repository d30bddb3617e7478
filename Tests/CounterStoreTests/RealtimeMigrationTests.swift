@testable import CounterStore
import CounterpointCore
import Foundation
import Patience
import SQLiteDB
import Testing

/// realtime.sqlite written at schema version 4 — counts, dimension counts and listener
/// sketches in three tables — opened by this version, which keeps them in one row per
/// (hour, track): nothing may be lost or changed on the way.
@Suite("Realtime store of three tables migrated to one", .onTestThreads)
struct RealtimeMigrationTests {
    /// One (hour, track) of the old store: its plays (nil: no counts row) and payload rows
    /// (nil: none), the payloads encoded from plays the test keeps.
    struct OldRow {
        var track: Int64
        var hour: Int64
        var plays: Int64?
        var dimensions: [UInt8]?
        var listenerPlays: Int64 = 0
        var listeners: [UInt8]?
    }

    typealias DimensionPlay = DimensionStoreTests.Play

    /// The dimension blob of `plays` of one (track, hour), as an aggregation encodes it.
    static func dimensions(_ plays: [DimensionPlay]) throws -> [UInt8] {
        try #require(DimensionStoreTests.rows(plays.map { (track: 1, hour: hour(0).index, play: $0) }).1.first).encoded
    }

    /// The listener plays and sketch of `listeners` (nil: a play without one) of one (track, hour).
    static func sketch(_ listeners: [Int64?]) throws -> (Int64, [UInt8]) {
        let row = try #require(ListenerStoreTests.rows(listeners.map { (track: 1, hour: hour(0).index, listener: $0) }).1.first)
        return (row.value, row.encoded)
    }

    /// Writes `rows` into a new realtime.sqlite at schema version 4, through its own DDL.
    static func writeVersionFour(_ rows: [OldRow], at location: StoreLocation) throws {
        try FileManager.default.createDirectory(atPath: location.directory, withIntermediateDirectories: true)
        let database = try Database(path: location.realtimePath)
        try database.write { db in
            for migration in SQLiteSchema.realtime.migrations.prefix(4) { try db.execute(migration) }
            try db.setUserVersion(4)
            let counts = try db.makeStatement("INSERT INTO realtime_counts (hour, track_id, plays) VALUES (?1, ?2, ?3)")
            let dimensions = try db.makeStatement("INSERT INTO realtime_dimensions (hour, track_id, dimensions) VALUES (?1, ?2, ?3)")
            let listeners = try db.makeStatement(
                "INSERT INTO realtime_listeners (hour, track_id, listener_plays, listeners) VALUES (?1, ?2, ?3, ?4)")
            for row in rows {
                for statement in [counts, dimensions, listeners] {
                    try statement.bind(hour(row.hour).index, at: 1)
                    try statement.bind(row.track, at: 2)
                }
                if let plays = row.plays {
                    try counts.bind(plays, at: 3)
                    try counts.execute()
                }
                if let blob = row.dimensions {
                    try dimensions.bind(bytes: blob, at: 3)
                    try dimensions.execute()
                }
                if let sketch = row.listeners {
                    try listeners.bind(row.listenerPlays, at: 3)
                    try listeners.bind(bytes: sketch, at: 4)
                    try listeners.execute()
                }
            }
            try db.execute("""
                INSERT INTO partition_offsets (topic, partition, next_offset, high_watermark, flushed_at) VALUES ('plays', 0, 40, 50, 7);
                INSERT INTO last_flush (id, flushed_at, changes) VALUES (1, 7, 3);
                """)
        }
    }

    @Test("every count, dimension blob and sketch of a version-4 store survives in one row per (hour, track), payload rows without counts included")
    func migratesEveryRow() throws {
        try withStoreLocation { location in
            let ios = DimensionPlay(bucket: 3, client: "ios", country: "SE")
            let web = DimensionPlay(bucket: nil, client: "web", country: nil)
            let (listenerPlays, sketch) = try Self.sketch([1, 2, 2, nil])
            let many: [Int64?] = (Int64(1)...300).map { $0 }
            let (manyPlays, manySketch) = try Self.sketch(many)
            let rows = [
                OldRow(track: 1, hour: 0, plays: 4, dimensions: try Self.dimensions([ios, ios, web, web]),
                       listenerPlays: listenerPlays, listeners: sketch),
                OldRow(track: 2, hour: 0, plays: 2, dimensions: try Self.dimensions([web, ios])),
                OldRow(track: 1, hour: 1, plays: 300, listenerPlays: manyPlays, listeners: manySketch),
                OldRow(track: 3, hour: 2, plays: 9),
                // Payloads without a counts row: they become rows of 0 plays.
                OldRow(track: 4, hour: 3, dimensions: try Self.dimensions([ios]), listenerPlays: listenerPlays, listeners: sketch),
                OldRow(track: 5, hour: 3, listenerPlays: manyPlays, listeners: manySketch),
            ]
            try Self.writeVersionFour(rows, at: location)

            let realtime = try SQLiteRealtimeStore(location: location)
            let database = try Database(path: location.realtimePath, mode: .readOnly)
            #expect(try database.userVersion() == SQLiteSchema.realtime.version)
            var tables: [String] = []
            try database.makeStatement("SELECT name FROM sqlite_master ORDER BY name").forEachRow { tables.append($0.string(at: 0)) }
            #expect(tables == ["creator_realtime_counts", "creator_realtime_counts_by_id", "last_flush", "partition_offsets", "realtime_counts",
                               "realtime_counts_by_track", "realtime_hours"])

            var stored: [String] = []
            try database.makeStatement("""
                SELECT hour, track_id, plays, dimensions, listener_plays, listeners FROM realtime_counts ORDER BY hour, track_id
                """).forEachRow { row in
                stored.append("\(row.int64(at: 0)) \(row.int64(at: 1)) \(row.int64(at: 2)) \(row.isNull(at: 3) ? "-" : "\(row.bytes(at: 3))") "
                              + "\(row.int64(at: 4)) \(row.isNull(at: 5) ? "-" : "\(row.bytes(at: 5))")")
            }
            #expect(stored == rows.map { row in
                "\(hour(row.hour).index) \(row.track) \(row.plays ?? 0) \(row.dimensions.map { "\($0)" } ?? "-") "
                    + "\(row.listenerPlays) \(row.listeners.map { "\($0)" } ?? "-")"
            })
            #expect(try realtime.storedOffsets(topic: "plays") == [0: 40])

            // The answers read them back, and a flush merges into the moved rows.
            let reader = try StoreBackend.sqlite(location).openReader()
            #expect(try reader.plays(track: 1, in: hours(0, 24)).realtimePlays == 304)
            DimensionStoreTests.check(try reader.dimensions(track: 2, in: hours(0, 24)), [web, ios], "track 2 before the flush")
            let trackOne: [ListenerStoreTests.Play] = [1, 2, 2, nil].map { (1, hour(0).index, $0) } + many.map { (1, hour(1).index, $0) }
            ListenerStoreTests.check(try reader.listeners(track: 1, in: hours(0, 2)), trackOne, "track 1 before the flush")
            let (counts, dimensions) = DimensionStoreTests.rows([(2, hour(0).index, ios)])
            let (_, sketches) = ListenerStoreTests.rows([(2, hour(0).index, 7)])
            #expect(try realtime.apply(increments: counts, dimensions: dimensions, listeners: sketches, progress: [
                PartitionProgress(topic: "plays", partition: 0, startOffset: 40, nextOffset: 41, highWatermark: 50),
            ], flushedAt: 8) == .committed)
            DimensionStoreTests.check(try reader.dimensions(track: 2, in: hours(0, 24)), [web, ios, ios], "track 2 after the flush")
            let listeners = try reader.listeners(track: 2, in: hours(0, 24))
            #expect(listeners.listeners == 1 && listeners.exact && listeners.playsWithoutListener == 2)
        }
    }
}
