import CounterpointCore
import CounterStore
import Foundation
import HTTPServer
import HTTPTestClient
import Logging
import Reader
import StoreTestSupport

/// Hours of a fixed day, 2026-11-20, so tests read as "hour 10 of the day".
let day = Hour(index: UTCTime.daysFromCivil(year: 2026, month: 11, day: 20) * 24)
func hour(_ offset: Int64) -> Hour { day.advanced(by: offset) }
func hours(_ lower: Int64, _ upper: Int64) -> HourRange { HourRange(hour(lower), hour(upper)) }
/// The RFC 3339 text of an hour, as the API writes and accepts it.
func time(_ offset: Int64) -> String { hour(offset).description }

let quietLogger = Logger(label: "reader-tests") { _ in SwiftLogNoOpLogHandler() }

/// Both stores of one backend (`StoreKind`), and a `ReaderServer` on 127.0.0.1 port 0 over
/// them. Build one with `ReaderFixture.with`, which stops the server and removes the stores.
final class ReaderFixture {
    let directory: String
    let store: StoreBackend
    let server: ReaderServer

    private init(directory: String, store: StoreBackend, configure: (inout ReaderConfiguration) -> Void, logger: Logger) throws {
        self.directory = directory
        self.store = store
        var configuration = ReaderConfiguration(
            store: store, server: HTTPServerConfiguration(port: 0, threadCount: 4), clock: .fixed(atEpochMilliseconds: standardNow))
        configure(&configuration)
        server = try ReaderServer(configuration: configuration, logger: logger)
    }

    /// The SQLite files, for the tests of what SQLite files do (only for `.sqlite`).
    var location: StoreLocation {
        guard case let .sqlite(location) = store else { preconditionFailure("not an SQLite store: \(store)") }
        return location
    }

    /// - Parameters:
    ///   - kind: the backend.
    ///   - stores: fills the stores through the seam before the server starts (the writers are
    ///     closed afterwards).
    ///   - configure: adjusts the reader's configuration (now, live status, metrics).
    static func with<T>(_ kind: StoreKind, stores: (any BatchWriter, any RealtimeWriter) throws -> Void = standardStores,
                        configure: (inout ReaderConfiguration) -> Void = { _ in },
                        logger: Logger = quietLogger,
                        _ body: (ReaderFixture) throws -> T) throws -> T {
        try kind.withStore { store, directory in
            try stores(store.openBatchWriter(), store.openRealtimeWriter())
            let fixture = try ReaderFixture(directory: directory, store: store, configure: configure, logger: logger)
            defer { fixture.server.stop() }
            return try body(fixture)
        }
    }

    func client() throws -> TestClient { try TestClient(port: server.port) }

    /// One GET (or `method`) on a fresh connection.
    func get(_ target: String, method: String = "GET", headers: [String] = []) throws -> TestResponse {
        try client().request(target, method: method, headers: headers)
    }

    /// A GET that must answer 200 with JSON, decoded.
    func json<Answer: Decodable>(_ target: String, as type: Answer.Type = Answer.self) throws -> Answer {
        let response = try get(target)
        guard response.status == 200 else {
            throw TestClientError(description: "\(target) answered \(response.status): \(response.text)")
        }
        return try response.decode(type)
    }
}

// MARK: The standard data set

/// Now, for timeline defaults: 2026-11-20T12:30:00Z.
let standardNow: Int64 = hour(12).epochSeconds * 1000 + 30 * 60 * 1000
/// The realtime layer's last flush: 2026-11-20T12:15:00.123Z.
let standardFlushedAt: Int64 = hour(12).epochSeconds * 1000 + 15 * 60 * 1000 + 123

/// Batch coverage [D−24h, D+10h) with rows, and [D+40h, D+42h) without any; realtime plays
/// inside and outside coverage; two partitions of `plays` 30 events behind in total.
///
/// Merged totals over all time:
/// - track 1: batch 100 + 10 + 20 = 130, realtime 4 + 6 + 3 = 13 (the 999 at hour 5, 555 at
///   hour 7 and 77 at hour 41 are in covered hours and never read) → 143
/// - track 2: batch 7, realtime 2 → 9
/// - track 3: batch 1 → 1
/// - track 4: realtime 8 (its 50 at hour 1 is covered) → 8
/// - track 5: realtime 8 → 8
func standardStores(_ batch: any BatchWriter, _ realtime: any RealtimeWriter) throws {
    try batch.replace(range: hours(-24, 10), run: standardRun(hours(-24, 10), reasons: ["malformed_json": 2, "missing_field": 1])) {
        try $0.write(trackID: 1, hour: hour(-3), plays: 100)
        try $0.write(trackID: 1, hour: hour(2), plays: 10)
        try $0.write(trackID: 1, hour: hour(5), plays: 20)
        try $0.write(trackID: 2, hour: hour(3), plays: 7)
        try $0.write(trackID: 3, hour: hour(9), plays: 1)
    }
    try batch.replace(range: hours(40, 42), run: standardRun(hours(40, 42), reasons: [:])) { _ in }
    let increments: [(Int64, Int64, Int64)] = [
        (1, 5, 999), (1, 7, 555), (1, 10, 4), (1, 12, 6), (1, 30, 3), (1, 41, 77),
        (2, 3, 1_000), (2, 11, 2),
        (4, 1, 50), (4, 15, 8),
        (5, 20, 8),
    ]
    _ = try realtime.apply(
        increments: increments.map { CountRow(id: $0.0, hour: hour($0.1), plays: $0.2) },
        progress: [
            PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 100, highWatermark: 130),
            PartitionProgress(topic: "plays", partition: 1, startOffset: nil, nextOffset: 50, highWatermark: 50),
        ],
        flushedAt: standardFlushedAt)
}

func standardRun(_ range: HourRange, reasons: [String: Int]) -> BatchRun {
    BatchRun(range: range, startedAt: standardNow - 60_000, finishedAt: standardNow - 30_000, eventsRead: 150,
             valid: 147, duplicates: 4, rejected: reasons.values.reduce(0, +), rejectedByReason: reasons,
             tracks: 3, rows: 5)
}

// MARK: Answers

struct FreshnessAnswer: Decodable, Equatable {
    var batchCoveredUntil: String?
    var realtimeFlushedAt: String?
    var realtimeLagEvents: Int64?
}

let standardFreshness = FreshnessAnswer(batchCoveredUntil: time(42), realtimeFlushedAt: "2026-11-20T12:15:00.123Z",
                                        realtimeLagEvents: 30)

struct TrackPlaysAnswer: Decodable, Equatable {
    var trackId: Int64
    var plays: Int64
    var batchPlays: Int64
    var realtimePlays: Int64
    var freshness: FreshnessAnswer?
}

struct TracksAnswer: Decodable {
    var tracks: [TrackPlaysAnswer]
    var freshness: FreshnessAnswer
}

struct TimelineAnswer: Decodable {
    struct Point: Decodable, Equatable {
        var start: String
        var plays: Int64
        var source: String
    }

    var trackId: Int64
    var step: String
    var from: String
    var to: String
    var points: [Point]
    var freshness: FreshnessAnswer
}

struct ErrorAnswer: Decodable {
    struct Detail: Decodable {
        var code: String
        var message: String
    }

    var error: Detail
}

extension TestResponse {
    func decode<Answer: Decodable>(_ type: Answer.Type) throws -> Answer {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(type, from: Data(body))
    }

    /// The body as a JSON object, for checking keys and nulls that `Decodable` would blur.
    func object() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw TestClientError(description: "not a JSON object: \(text)")
        }
        return object
    }
}
