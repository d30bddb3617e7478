import CoreTestSupport
import CounterpointCore
import CounterStore
import Foundation
import HTTPTestClient
import Patience
import StoreTestSupport
import Testing

/// CSV is the reader's rendering of answers the stores give alike, so these run on SQLite
/// alone; the JSON twins they are compared with are checked on both stores by the other suites.
@Suite("List answers as CSV (format=csv, Accept: text/csv)", .onTestThreads)
struct CSVAnswerTests {
    struct Breakdown: Decodable {
        struct Value: Decodable { var value: String?; var plays: Int64 }
        var values: [Value]
    }

    struct ListenerTimeline: Decodable {
        struct Point: Decodable { var start: String; var listeners: Int64; var exact: Bool; var source: String }
        var points: [Point]
    }

    /// The standard data, and plays of track 1 at hour 12 by clients whose names need quoting.
    static let awkwardClients = ["a,b", #"say "hi""#, "line\nbreak", "plain"]

    static func stores(_ batch: any BatchWriter, _ realtime: any RealtimeWriter) throws {
        try standardStores(batch, realtime)
        var dimensions = DimensionCounts()
        for (index, client) in awkwardClients.enumerated() {
            for _ in 0...index {
                dimensions.add(id: 1, hour: hour(12),
                               PlayDimensions(waveformBucket: nil, client: DimensionValue(client), country: nil))
            }
        }
        // Ten more plays of track 1 (153 in all), 143 of them without a client.
        _ = try realtime.apply(
            increments: [CountRow(id: 1, hour: hour(12), plays: 10)], dimensions: dimensions.rows(),
            progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: 100, nextOffset: 101, highWatermark: 130)],
            flushedAt: standardFlushedAt)
    }

    @Test("every list answer's CSV has its JSON items' keys as header and their values as records")
    func csvEqualsJSON() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            let range = "from=\(time(4))&to=\(time(13))"
            let timeline = try reader.json("/v1/tracks/1/timeline?\(range)", as: TimelineAnswer.self)
            #expect(try csv(reader, "/v1/tracks/1/timeline?\(range)&format=csv") ==
                [["start", "plays", "source"]] + timeline.points.map { [$0.start, "\($0.plays)", $0.source] })

            let days = try reader.json("/v1/tracks/1/timeline?\(range)&step=day", as: TimelineAnswer.self)
            #expect(try csv(reader, "/v1/tracks/1/timeline?\(range)&step=day&format=csv") ==
                [["start", "plays", "source"]] + days.points.map { [$0.start, "\($0.plays)", $0.source] })

            let top = try reader.json("/v1/top?limit=3", as: TracksAnswer.self)
            #expect(top.tracks.count == 3)
            #expect(try csv(reader, "/v1/top?limit=3&format=csv") ==
                [["track_id", "plays", "batch_plays", "realtime_plays"]] +
                top.tracks.map { ["\($0.trackId)", "\($0.plays)", "\($0.batchPlays)", "\($0.realtimePlays)"] })

            let several = try reader.json("/v1/plays?track_id=2,1,77", as: TracksAnswer.self)
            #expect(try csv(reader, "/v1/plays?track_id=2,1,77&format=csv") ==
                [["track_id", "plays", "batch_plays", "realtime_plays"]] +
                several.tracks.map { ["\($0.trackId)", "\($0.plays)", "\($0.batchPlays)", "\($0.realtimePlays)"] })

            let listeners = try reader.json("/v1/tracks/1/listeners/timeline?\(range)", as: ListenerTimeline.self)
            #expect(try csv(reader, "/v1/tracks/1/listeners/timeline?\(range)&format=csv") ==
                [["start", "listeners", "exact", "source"]] +
                listeners.points.map { [$0.start, "\($0.listeners)", "\($0.exact)", $0.source] })
        }
    }

    @Test("text with a comma, a quote or a line break is quoted and its quotes doubled; a null value is an empty field")
    func quoting() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            let json = try reader.get("/v1/tracks/1/breakdown?by=client").decode(Breakdown.self)
            // Independent truth: client i was sent i + 1 times; the rest of the track's plays name none.
            #expect(json.values.map(\.value) == Self.awkwardClients.reversed() + [nil])
            let response = try reader.get("/v1/tracks/1/breakdown?by=client&format=csv")
            #expect(response.text == "value,plays\r\nplain,4\r\n\"line\nbreak\",3\r\n\"say \"\"hi\"\"\",2\r\n\"a,b\",1\r\n,143\r\n")
            #expect(try CSVRecords.parse(response.text) ==
                [["value", "plays"]] + json.values.map { [$0.value ?? "", "\($0.plays)"] })
        }
    }

    @Test("Accept: text/csv asks for CSV, format wins over Accept, and a JSON preference or */* keeps JSON")
    func negotiation() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            let target = "/v1/top?limit=5"
            let byFormat = try reader.get(target + "&format=csv")
            let cases: [(query: String, accept: String?, csv: Bool)] = [
                ("", "text/csv", true),
                ("", "application/json;q=0.5, text/csv", true),
                ("", "text/csv;q=0.2, application/json", false),
                ("", "text/csv, application/json", true),
                ("", "application/json, text/csv", false),
                ("", "*/*", false),
                ("", "text/html,application/xhtml+xml,*/*;q=0.8", false),
                ("", "text/csv;q=0", false),
                ("", nil, false),
                ("&format=json", "text/csv", false),
                ("&format=csv", "application/json", true),
            ]
            for (query, accept, wantsCSV) in cases {
                let response = try reader.get(target + query, headers: accept.map { ["Accept: \($0)"] } ?? [])
                #expect(response.status == 200)
                let type = response.header("Content-Type")
                #expect(type == (wantsCSV ? "text/csv; charset=utf-8" : "application/json; charset=utf-8"), "\(query) \(accept ?? "-")")
                if wantsCSV { #expect(response.body == byFormat.body) }
            }
        }
    }

    @Test("a CSV answer is an attachment whose file name says the subject, what is counted and the range")
    func fileNames() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            let expected: [(String, String)] = [
                ("/v1/tracks/1/timeline?from=\(time(0))&to=\(time(168))", "track-1-plays-by-hour-2026-11-20-to-2026-11-27.csv"),
                ("/v1/tracks/1/timeline?from=\(time(4))&to=\(time(13))", "track-1-plays-by-hour-2026-11-20T04-to-2026-11-20T13.csv"),
                ("/v1/tracks/1/timeline?from=\(time(0))&to=\(time(48))&step=day", "track-1-plays-by-day-2026-11-20-to-2026-11-22.csv"),
                ("/v1/tracks/1/listeners/timeline?from=\(time(0))&to=\(time(24))&step=day", "track-1-listeners-by-day-2026-11-20-to-2026-11-21.csv"),
                ("/v1/tracks/1/breakdown?by=country", "track-1-plays-by-country-all-time.csv"),
                ("/v1/top?from=\(time(24))", "top-tracks-plays-since-2026-11-21.csv"),
                ("/v1/plays?track_id=1,2&to=\(time(24))", "tracks-plays-until-2026-11-21.csv"),
            ]
            for (target, name) in expected {
                let response = try reader.get(target + "&format=csv")
                #expect(response.status == 200)
                #expect(response.header("Content-Disposition") == #"attachment; filename="\#(name)""#, "\(target)")
            }
        }
    }

    @Test("an unknown format is a 400 naming it, and format on an answer that is not a list is an unknown parameter")
    func badFormat() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            let unknown = try reader.get("/v1/top?format=xml")
            #expect(unknown.status == 400)
            let error = try unknown.decode(ErrorAnswer.self).error
            #expect(error.code == "invalid_format" && error.message.contains("'xml'"))
            for target in ["/v1/tracks/1/plays?format=csv", "/v1/tracks/1/waveform?format=csv", "/v1/status?format=csv"] {
                let response = try reader.get(target)
                #expect(response.status == 400)
                #expect(try response.decode(ErrorAnswer.self).error.code == "unknown_parameter", "\(target)")
            }
            // Accept: text/csv on an answer that is not a list is JSON, as before.
            let plays = try reader.get("/v1/tracks/1/plays", headers: ["Accept: text/csv"])
            #expect(plays.status == 200 && plays.header("Content-Type") == "application/json; charset=utf-8")
        }
    }

    /// A 200 CSV answer, parsed.
    private func csv(_ reader: ReaderFixture, _ target: String) throws -> [[String]] {
        let response = try reader.get(target)
        guard response.status == 200, response.header("Content-Type") == "text/csv; charset=utf-8" else {
            throw TestClientError(description: "\(target) answered \(response.status) \(response.header("Content-Type") ?? "-"): \(response.text)")
        }
        return try CSVRecords.parse(response.text)
    }
}
