import CounterpointCore
import Foundation
import Programs
import Scratch
import Testing

/// `run --demo` generates its history at the live traffic's rate (README, "Run it"), so that the
/// first chart a newcomer sees is a day's rhythm running into the current hour.
extension RunEndToEnd {
    @Suite("run --demo: history and live traffic at one rate")
    struct DemoHistoryTests {
        @Test("without --demo-events, the first batch run counts 48 hours of history at --demo-rate events per second")
        func historyAtTheLiveRate() async throws {
            try await withTemporaryDirectory { scratch in
                try await Self.withFirstBatchRun(data: scratch.appendingPathComponent("data").path, scratch: scratch) { _, firstRun in
                    // 0.5 events a second for 48 hours; the generator's duplicates and malformed
                    // lines come on top and are not counted.
                    let valid = try #require(firstRun["valid"] as? Int), duplicates = try #require(firstRun["duplicates"] as? Int)
                    #expect(valid - duplicates == 86_400, "\(firstRun)")
                    let from = try #require(firstRun["from"] as? String), to = try #require(firstRun["to"] as? String)
                    let span = try #require(ISO8601DateFormatter().date(from: to)).timeIntervalSince(
                        try #require(ISO8601DateFormatter().date(from: from)))
                    #expect(span == 48 * 3_600)
                }
            }
        }

        @Test("hours that already hold logs (an earlier run's plays) keep them, with no history generated on top")
        func earlierLogsKept() async throws {
            try await withTemporaryDirectory { scratch in
                let data = scratch.appendingPathComponent("data").path
                // Three plays of a track the demo never generates, filed as an earlier run's
                // archiver files and closes them, five hours ago.
                let hour = Hour(epochMilliseconds: Int64(Date().timeIntervalSince1970 * 1_000)).advanced(by: -5)
                let start = UTCTime.format(epochMilliseconds: hour.epochSeconds * 1_000)
                let directory = "\(data)/logs/\(start.prefix(10))"
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let plays = (1...3).map { #"{"event_id":"earlier-\#($0)","type":"play","track_id":777777,"occurred_at":"\#(start)"}"# }
                try Data((plays.joined(separator: "\n") + "\n").utf8)
                    .write(to: URL(fileURLWithPath: "\(directory)/\(start.dropFirst(11).prefix(2)).p0.ndjson"))
                try Data().write(to: URL(fileURLWithPath: "\(directory)/\(start.dropFirst(11).prefix(2)).closed"))

                try await Self.withFirstBatchRun(data: data, scratch: scratch) { server, firstRun in
                    // The other 47 hours are generated as before; the earlier hour holds its three plays only.
                    let valid = try #require(firstRun["valid"] as? Int), duplicates = try #require(firstRun["duplicates"] as? Int)
                    #expect(valid - duplicates > 80_000 && valid - duplicates < 86_400 + 3, "\(firstRun)")
                    let end = UTCTime.format(epochMilliseconds: hour.advanced(by: 1).epochSeconds * 1_000)
                    let top = try server.json("/v1/top?from=\(start)&to=\(end)&limit=5")["tracks"] as? [[String: Any]]
                    #expect(top?.count == 1 && top?.first?["track_id"] as? Int == 777_777 && top?.first?["plays"] as? Int == 3, "\(top ?? [])")
                }
            }
        }

        /// Starts `run --demo` at 0.5 events a second on `data`, hands `body` its reader and the
        /// record of its first batch run (`/v1/status`), then stops it and checks it stopped cleanly.
        static func withFirstBatchRun(data: String, scratch: URL,
                                      _ body: (Server, [String: Any]) async throws -> Void) async throws {
            let run = try Executable.start([
                "run", "--demo", "--demo-rate", "0.5", "--partitions", "2", "--data-dir", data, "--listen", "127.0.0.1:0",
            ], scratch: scratch)
            do {
                let server = Server(command: run, port: try await RunMergeTests.addresses(of: run).port)
                var firstRun: [String: Any]?
                try await Drill.waitUntil(timeout: .seconds(120)) {
                    let batch = try server.json("/v1/status")["batch"] as? [String: Any]
                    firstRun = (batch?["runs"] as? [[String: Any]])?.last
                    return firstRun != nil
                }
                try await body(server, firstRun ?? [:])
                run.signal(SIGINT)
                let result = try #require(try await run.waitForExit(timeout: .seconds(15)), "run did not stop within 15 s")
                #expect(result.exited && result.status == 0, "\(result.summary)")
            } catch {
                await run.killIfRunning()
                throw error
            }
        }
    }
}
