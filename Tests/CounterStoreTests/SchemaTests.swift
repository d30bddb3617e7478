import CounterStore
import CounterpointCore
import Foundation
import Patience
import SQLiteDB
import Testing

@Suite("Store files and schema", .onTestThreads)
struct SchemaTests {
    /// PRAGMA user_version lives at bytes 60–63 of the database header, big-endian.
    func userVersion(ofFile path: String) throws -> UInt32 {
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(64)
        return header[60..<64].reduce(0) { $0 << 8 | UInt32($1) }
    }

    @Test("opening the stores creates the data directory and both files at their schema versions")
    func createsSchema() throws {
        try withStoreLocation { location in
            do {
                _ = try SQLiteRealtimeStore(location: location)
                _ = try SQLiteBatchStore(location: location)
            }
            // Realtime: counts, dimensions, a change counter, listeners, payloads in the counts rows,
            // hour stamps, every signal. Batch: hours, rollups, recorded sources, dimensions, listeners,
            // narrow indexes, every signal.
            #expect(try userVersion(ofFile: location.realtimePath) == 8)
            #expect(try userVersion(ofFile: location.batchPath) == 8)
        }
    }

    @Test("a file with a newer schema version than this program knows is refused")
    func newerVersionRefused() throws {
        try withStoreLocation { location in
            do { _ = try SQLiteBatchStore(location: location) }
            var bytes = try Data(contentsOf: URL(fileURLWithPath: location.batchPath))
            bytes.replaceSubrange(60..<64, with: [0, 0, 0, 9])
            try bytes.write(to: URL(fileURLWithPath: location.batchPath))
            let error = try #require(throws: CounterStoreError.self) { try SQLiteBatchStore(location: location) }
            #expect(error == .schemaTooNew(path: location.batchPath, found: 9, supported: 8))
            #expect(throws: CounterStoreError.self) { try StoreBackend.sqlite(location).openReader() }
        }
    }

    @Test("reopening the stores keeps counts, offsets, coverage and runs")
    func reopenKeepsData() throws {
        try withStoreLocation { location in
            do {
                let realtime = try SQLiteRealtimeStore(location: location)
                try flush(realtime, [(1, 30, 5)], from: nil, to: 100)
                let batch = try SQLiteBatchStore(location: location)
                try replace(batch, hours(0, 24), [(1, 3, 7)])
            }
            let realtime = try SQLiteRealtimeStore(location: location)
            #expect(try realtime.storedOffsets(topic: "plays") == [0: 100])
            let batch = try SQLiteBatchStore(location: location)
            #expect(try batch.coverage() == Coverage([hours(0, 24)]))
            #expect(try batch.recentRuns(limit: 10).count == 1)
            let reader = try StoreBackend.sqlite(location).openReader()
            #expect(try reader.plays(track: 1, in: .allTime) == TrackPlays(id: 1, batchPlays: 7, realtimePlays: 5))
        }
    }

    @Test("a reader starts on an empty data directory and answers zero")
    func readerOnEmptyDirectory() throws {
        try withStoreLocation { location in
            let reader = try StoreBackend.sqlite(location).openReader()
            #expect(reader.isReadable())
            #expect(try reader.plays(track: 1, in: .allTime).plays == 0)
            #expect(try reader.freshness() == Freshness(batchCoveredUntil: nil, realtimeFlushedAt: nil, realtimeLagEvents: nil))
            #expect(try reader.top(in: .allTime, limit: 10).isEmpty)
            #expect(try reader.partitions().isEmpty)
            // Writers open the files the reader created.
            let realtime = try SQLiteRealtimeStore(location: location)
            try flush(realtime, [(1, 0, 2)], from: nil, to: 1)
            #expect(try reader.plays(track: 1, in: .allTime).plays == 2)
        }
    }

    @Test("a data directory that cannot be created is a clear error")
    func unwritableDirectory() throws {
        try withStoreLocation { location in
            // A regular file where a directory should be: fails even for root.
            try FileManager.default.createDirectory(atPath: location.directory, withIntermediateDirectories: true)
            let blocker = location.directory + "/file"
            try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
            let inside = StoreLocation(directory: blocker + "/data")
            for open in [{ _ = try SQLiteRealtimeStore(location: inside) }, { _ = try SQLiteBatchStore(location: inside) },
                         { _ = try StoreBackend.sqlite(inside).openReader() }] as [() throws -> Void] {
                let error = try #require(throws: CounterStoreError.self) { try open() }
                guard case .cannotCreateDirectory(let path, _) = error else {
                    Issue.record("unexpected error \(error)")
                    continue
                }
                #expect(path == inside.directory)
            }
        }
    }

    @Test("a store file that is not a database is a clear SQLite error, not a crash")
    func corruptFile() throws {
        try withStoreLocation { location in
            try FileManager.default.createDirectory(atPath: location.directory, withIntermediateDirectories: true)
            try Data(repeating: 0xAB, count: 4096).write(to: URL(fileURLWithPath: location.realtimePath))
            let error = try #require(throws: SQLiteError.self) { try SQLiteRealtimeStore(location: location) }
            #expect(error.kind == .corrupt)
            #expect(error.operation.contains("realtime.sqlite") || error.message.contains("not a database"))
            let readerError = try #require(throws: SQLiteError.self) { try StoreBackend.sqlite(location).openReader() }
            #expect(readerError.kind == .corrupt)
            // Callers that do not know the engine see the same failure through `StoreFailure`.
            let opening = try #require(throws: (any Error).self) { try StoreBackend.sqlite(location).openRealtimeWriter() }
            let failure = try #require(opening as? any StoreFailure)
            #expect(failure.failureKind == .corrupt && failure.failureKind.isUnavailable)
        }
    }
}
