import Foundation
import Programs
import Scratch
import Testing

/// docs/runbook.md: SIGINT/SIGTERM stops cleanly, logging nothing at warning or error level, and the
/// metrics are a valid Prometheus exposition with help text.
extension RunEndToEnd {
    @Suite("run --demo: a clean stop and valid metrics", .serialized)
    struct CleanStopAndMetricsTests {
        @Test("Ctrl-C (SIGINT) of run --demo exits 0 and logs nothing at warning or error level")
        func cleanInterrupt() async throws {
            try await withTemporaryDirectory { scratch in
                let run = try await Self.startDemo(scratch: scratch)
                run.signal(SIGINT)
                let result = try #require(try await run.waitForExit(timeout: .seconds(15)), "run did not stop within 15 s")
                #expect(result.exited && result.status == 0, "\(result.summary)")
                let loud = result.stderr.split(separator: "\n").filter { line in
                    [" warning ", " error ", " critical "].contains { line.contains($0) }
                }
                #expect(loud.isEmpty, "lines at warning or error level:\n\(loud.joined(separator: "\n"))")
                #expect(result.stderr.contains("stopped"), "\(result.summary)")
            }
        }

        @Test("promtool check metrics passes on /metrics: every metric has help text and a valid name")
        func promtoolAcceptsMetrics() async throws {
            // scripts/setup installs promtool (Debian package prometheus): missing, it is a failure.
            let promtool = try #require(["/usr/bin/promtool", "/usr/local/bin/promtool"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            }, "promtool is missing: run ./scripts/setup (Debian package prometheus)")
            try await withTemporaryDirectory { scratch in
                let run = try await Self.startDemo(scratch: scratch)
                do {
                    let port = try await RunMergeTests.addresses(of: run).port
                    let server = Server(command: run, port: port)
                    // After a request, so the HTTP metrics are there too.
                    _ = try server.request("/v1/top")
                    let response = try server.request("/metrics")
                    #expect(response.status == 200)
                    #expect(response.text.contains("# HELP counterpoint_ingest_events_total "))
                    let check = try await Program.run(promtool, ["check", "metrics"], input: response.body, mergingErrors: true)
                    #expect(check.status == 0 && check.text.isEmpty, "promtool says:\n\(check.text)")
                    try await server.stop(timeout: .seconds(15))
                } catch {
                    await run.killIfRunning()
                    throw error
                }
            }
        }

        /// `run --demo` with a small history, once its realtime layer has flushed.
        static func startDemo(scratch: URL) async throws -> RunningProgram {
            let run = try Executable.start([
                "run", "--demo", "--demo-events", "20000", "--demo-rate", "500", "--partitions", "4",
                "--data-dir", scratch.appendingPathComponent("data").path, "--listen", "127.0.0.1:0",
            ], scratch: scratch)
            do {
                let server = Server(command: run, port: try await RunMergeTests.addresses(of: run).port)
                try await Drill.waitUntil(timeout: .seconds(60)) {
                    let realtime = try server.json("/v1/status")["realtime"] as? [String: Any]
                    return realtime?["last_flush_at"] is String
                }
                return run
            } catch {
                await run.killIfRunning()
                throw error
            }
        }
    }
}
