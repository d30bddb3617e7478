import CounterStore
import CounterpointCore
import Foundation
import PostgresDB
import PostgresTestServer
import Scratch

/// A data directory under the system's temporary directory, removed when the test ends.
func withStoreLocation<T>(_ body: (StoreLocation) throws -> T) throws -> T {
    try withTemporaryDirectory("counterstore-tests") { try body(StoreLocation(directory: $0.path + "/data")) }
}

/// The backends the seam's tests run against.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgresql
    var description: String { rawValue }
}

/// Opens the writers and readers of one fresh store of a backend.
struct TestStores {
    let backend: StoreBackend

    func realtime() throws -> any RealtimeWriter { try backend.openRealtimeWriter() }
    func reader() throws -> CounterReader { try backend.openReader() }

    func batch(sortBufferRows: Int? = nil) throws -> any BatchWriter {
        switch backend {
        case let .sqlite(location):
            var configuration = SQLiteBatchStore.Configuration()
            if let sortBufferRows { configuration.sortBufferRows = sortBufferRows }
            return try SQLiteBatchStore(location: location, configuration: configuration)
        case let .postgres(url):
            var configuration = PostgresBatchStore.Configuration()
            if let sortBufferRows { configuration.sortBufferRows = sortBufferRows }
            return try PostgresBatchStore(url: url, configuration: configuration)
        }
    }
}

/// A fresh, empty store of `kind` for `body`: a temporary data directory, or a new database on
/// the test process's PostgreSQL server (which fails the test, never skips it, if it cannot start).
func withStores<T>(_ kind: Backend, _ body: (TestStores) throws -> T) throws -> T {
    switch kind {
    case .sqlite:
        return try withStoreLocation { try body(TestStores(backend: .sqlite($0))) }
    case .postgresql:
        let server = try PostgresTestServer.shared()
        let url = try server.makeDatabase()
        defer { server.dropDatabase(url: url) }
        return try body(TestStores(backend: .postgres(url: url)))
    }
}

/// Hours of a fixed day, 2026-09-09, so tests read as "hour 10 of the day".
let day = Hour(index: 496_920) // 2026-09-09T00:00:00Z
func hour(_ offset: Int64) -> Hour { day.advanced(by: offset) }
func hours(_ lower: Int64, _ upper: Int64) -> HourRange { HourRange(hour(lower), hour(upper)) }

func batchRun(_ range: HourRange, rows: Int = 0) -> BatchRun {
    BatchRun(range: range, startedAt: 1_000, finishedAt: 2_000, eventsRead: 10, valid: 8, duplicates: 1, rejected: 1,
             rejectedByReason: ["malformed_json": 1], tracks: 1, rows: rows)
}

/// Writes `rows` (track, hour offset, plays) as one batch run over `range`.
@discardableResult
func replace(_ store: any BatchWriter, _ range: HourRange, _ rows: [(Int64, Int64, Int64)]) throws -> BatchRun {
    try store.replace(range: range, run: batchRun(range, rows: rows.count)) { writer in
        for (track, offset, plays) in rows {
            try writer.write(trackID: track, hour: hour(offset), plays: plays)
        }
    }
}

/// Applies `increments` (track, hour offset, plays) as one flush of partition 0 of "plays".
@discardableResult
func flush(_ store: any RealtimeWriter, _ increments: [(Int64, Int64, Int64)], from start: Int64?, to next: Int64,
           highWatermark: Int64? = nil, at time: Int64 = 1_700_000_000_000) throws -> FlushOutcome {
    try store.apply(
        increments: increments.map { CountRow(id: $0.0, hour: hour($0.1), plays: $0.2) },
        progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: start, nextOffset: next, highWatermark: highWatermark)],
        flushedAt: time)
}
