import Foundation
import Patience
import PostgresTestServer
import Scratch
import Testing

/// `counterpoint copy-store`: the one-shot move of a SQLite store into PostgreSQL, through the
/// real commands. The truth is the logs (`LogTruth`) and the SQLite reader's own answers.
@Suite("copy-store moves a SQLite store into PostgreSQL", .onTestThreads, .serialized)
struct CopyStoreCommandTests {
    @Test("after copy-store, serve on PostgreSQL answers totals, rankings, waveforms and listeners as serve on SQLite did; a second copy is refused")
    func copiedStoreAnswersAlike() async throws {
        let postgres = try PostgresTestServer.shared()
        let store = try postgres.makeDatabase()
        defer { postgres.dropDatabase(url: store) }
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            let data = scratch.appendingPathComponent("data")
            try await Steps.generate(into: logs, scratch: scratch, events: 6_000, tracks: 300, seed: 61, duplicates: 0.02)
            let exact = try LogTruth(logs: logs)
            try await Steps.batch(logs: logs, data: data, scratch: scratch,
                                  extraArguments: ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-20T12:00:00Z"])
            let covered = TestDay.firstHour..<(TestDay.firstHour + 12)
            let expected = Dictionary(uniqueKeysWithValues: exact.trackIDs.map { ($0, exact.plays(of: $0, hours: covered)) })
                .filter { $0.value > 0 }
            let busiest = try #require(expected.max { $0.value < $1.value }).key
            let targets = ["/v1/top?limit=50", "/v1/tracks/\(exact.trackIDs[0])/waveform",
                           "/v1/tracks/\(exact.trackIDs[0])/breakdown?by=country",
                           "/v1/tracks/\(exact.trackIDs[0])/timeline?step=day&from=2026-11-19T00:00:00Z&to=2026-11-22T00:00:00Z",
                           "/v1/tracks/\(busiest)/listeners",
                           "/v1/tracks/\(busiest)/listeners/timeline?step=hour&from=2026-11-20T00:00:00Z&to=2026-11-20T12:00:00Z"]
                + Self.creatorTargets(try #require(exact.creatorSignals.max { ($0.value["plays"] ?? 0) < ($1.value["plays"] ?? 0) }).key)

            let before = try await withServer(dataDirectory: data, scratch: scratch) { server in
                (try Steps.totals(server, tracks: exact.trackIDs).filter { $0.value > 0 },
                 try targets.map { try Self.body(server, $0) })
            }
            #expect(before.0 == expected)
            // The listener answers hold sketches (the copy must carry them to answer alike).
            #expect(!before.1[4].contains(#""listeners":0"#), "\(before.1[4])")
            #expect(before.1[8].contains(#""track_id""#) && before.1[6].contains(#""creator_id""#), "\(before.1[6]) \(before.1[8])")

            let copy = try await runCounterpointJSON(["copy-store", "--data-dir", data.path, "--store", store, "--json"], scratch: scratch)
            // A batch row is a (track, hour) with any signal not 0 (the logs hold every type), or comments on the waveform.
            let coveredRows = exact.signals.reduce(0) { sum, track in
                sum + track.value.keys.filter { covered.contains($0) && exact.hasStoredRow(track.key, hour: $0) }.count
            }
            #expect(int(copy["batch_rows"]) == coveredRows)

            let server = try await Server.start(dataDirectory: scratch.appendingPathComponent("unused"), scratch: scratch,
                                                extraArguments: ["--store", store])
            do {
                #expect(try Steps.totals(server, tracks: exact.trackIDs).filter { $0.value > 0 } == expected)
                for (target, answer) in zip(targets, before.1) {
                    #expect(try Self.body(server, target) == answer, "\(target)")
                }
                try await server.stop()
            } catch {
                await server.command.killIfRunning()
                throw error
            }

            let again = try await runCounterpoint(["copy-store", "--data-dir", data.path, "--store", store], scratch: scratch)
            #expect(again.exited && again.status != 0)
            #expect(again.stderrMessages.count == 1 && again.stderrMessages.first?.contains("already holds counts") == true,
                    "\(again.summary)")
        }
    }

    @Test("copy-store refuses a missing SQLite store and a --store that is not PostgreSQL with one line each")
    func refusesBadArguments() async throws {
        try await withTemporaryDirectory { scratch in
            let missing = try await runCounterpoint(
                ["copy-store", "--data-dir", scratch.appendingPathComponent("nothing").path, "--store", "postgresql://u@127.0.0.1:1/x"],
                scratch: scratch)
            #expect(missing.status != 0 && missing.stderrMessages.count == 1 && missing.stderr.contains("no SQLite store"))
            let notPostgres = try await runCounterpoint(["copy-store", "--data-dir", scratch.path], scratch: scratch)
            #expect(notPostgres.status != 0 && notPostgres.stderrMessages.count == 1 && notPostgres.stderr.contains("PostgreSQL"))
        }
    }

    /// The body of a 200 answer without its `freshness` object, which names the store's own
    /// flush and batch times: the counts must be equal, not the clocks.
    /// A creator's answers (SPEC §11), which the copy carries with the tracks'.
    static func creatorTargets(_ creator: Int64) -> [String] {
        ["/v1/creators/top?limit=20", "/v1/creators/\(creator)/counts", "/v1/creators/\(creator)/tracks?limit=100&signal=likes",
         "/v1/creators/\(creator)/listeners", "/v1/creators/\(creator)/breakdown?by=client"]
    }

    static func body(_ server: Server, _ target: String) throws -> String {
        let response = try server.request(target)
        guard response.status == 200 else {
            throw CommandError(description: "GET \(target) → \(response.status) \(response.text.prefix(300))")
        }
        guard var object = try JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any] else {
            return response.text
        }
        object["freshness"] = nil
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
