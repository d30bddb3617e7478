import Foundation
import Patience
import Programs
import Scratch
import Testing

/// `loadtest/run --smoke`: the load test's short mode, run against the binary under test so
/// that the script, its dashboard traffic, its probes and its report keep working. The
/// figures themselves are not judged here (no timed assertions); that they exist is.
extension EndToEnd {
    @Suite("loadtest/run --smoke")
    struct LoadTestSmokeTests {
        static let script = Executable.packageRoot.appendingPathComponent("loadtest/run").path
        static let charts = ["throughput", "lag", "freshness", "latency", "resources"]

        @Test("a smoke run steps the rate, runs the batch incident and writes a report with charts")
        func smokeRunWritesAReport() async throws {
            try await withTemporaryDirectory { scratch in
                let (run, out, work) = try Self.startSmokeRun(in: scratch)
                guard let result = try await run.waitForExit(timeout: .seconds(300)) else {
                    await run.killIfRunning()
                    Issue.record("loadtest/run --smoke still running after 300 s")
                    return
                }
                #expect(result.exited && result.status == 0, "\(result.summary)")
                #expect(result.stdout.contains("loadtest: Saturation point:"))

                let report = try String(contentsOf: out.appendingPathComponent("report.md"), encoding: .utf8)
                #expect(report.contains("## Summary"))
                #expect(report.contains("**Saturation point:**"))
                #expect(report.contains("**Batch rebuild under load (5k + batch):** rebuilt 6 closed hours"))
                for step in ["| 2k |", "| 5k |", "| 5k + batch |", "| max |"] {
                    #expect(report.contains(step), "no overview row \(step)")
                }
                for chart in Self.charts {
                    #expect(report.contains("(\(chart).svg)"))
                    let svg = try String(contentsOf: out.appendingPathComponent("\(chart).svg"), encoding: .utf8)
                    #expect(svg.contains("<svg") && svg.contains("</svg>"), "\(chart).svg is not a whole SVG")
                }

                let data = try Data(contentsOf: out.appendingPathComponent("data/figures.json"))
                let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                let figures = try #require(object["figures"] as? [[String: Any]])
                #expect(figures.map { $0["label"] as? String } == ["2k", "5k", "5k + batch", "max"])
                for figure in figures {
                    let label = figure["label"] as? String ?? "?"
                    #expect((figure["produced_per_second"] as? Double ?? 0) > 0, "\(label): nothing produced")
                    #expect((figure["counted_per_second"] as? Double ?? 0) > 0, "\(label): nothing counted")
                    let freshness = figure["freshness"] as? [String: Any] ?? [:]
                    #expect((freshness["probes"] as? Int ?? 0) > 0, "\(label): no freshness probe")
                    let http = figure["http"] as? [String: [String: Any]] ?? [:]
                    #expect(Set(http.keys) == ["totals", "timeline-hour", "timeline-day", "listeners", "multi-get", "creator", "top"])
                    for (kind, result) in http {
                        #expect((result["requests"] as? Int ?? 0) > 0, "\(label) \(kind): no request answered")
                        #expect(result["error_total"] as? Int == 0, "\(label) \(kind): \(result)")
                    }
                }
                // A child the harness did not reap gets SIGTERM from the kernel as the harness exits
                // (PR_SET_PDEATHSIG): give it a moment to go, then name whatever is left.
                let allGone = try await eventually(within: .seconds(15)) { Self.processes(mentioning: work.path).isEmpty }
                #expect(allGone, "processes left running: \(Self.processes(mentioning: work.path))")
            }
        }

        @Test("an interrupted load test stops every process it started and reports the finished steps")
        func interruptedRunCleansUp() async throws {
            try await withTemporaryDirectory { scratch in
                let (run, out, work) = try Self.startSmokeRun(in: scratch)
                try await eventually(within: .seconds(120), every: .milliseconds(50)) {
                    run.stdout.contains("step 2/") || !run.isRunning
                }
                guard run.stdout.contains("step 2/") else {
                    await run.killIfRunning()
                    Issue.record("never reached step 2: \(run.stdout)\(run.stderr)")
                    return
                }
                #expect(!Self.processes(mentioning: work.path).isEmpty, "the service should be running mid-step")
                run.signal(SIGTERM)
                guard let result = try await run.waitForExit(timeout: .seconds(60)) else {
                    await run.killIfRunning()
                    Issue.record("loadtest/run did not stop within 60 s of SIGTERM")
                    return
                }
                #expect(result.exited && result.status == 2, "\(result.summary)")
                let report = try String(contentsOf: out.appendingPathComponent("report.md"), encoding: .utf8)
                #expect(report.contains("**Interrupted:**"))
                #expect(report.contains("| 2k |"))
                // A child the harness did not reap gets SIGTERM from the kernel as the harness exits
                // (PR_SET_PDEATHSIG): give it a moment to go, then name whatever is left.
                let allGone = try await eventually(within: .seconds(15)) { Self.processes(mentioning: work.path).isEmpty }
                #expect(allGone, "processes left running: \(Self.processes(mentioning: work.path))")
            }
        }

        /// Starts `loadtest/run --smoke` on the binary under test; returns it, its report folder
        /// and its work folder (which every process it starts names in its arguments).
        static func startSmokeRun(in scratch: URL) throws -> (RunningProgram, out: URL, work: URL) {
            let out = scratch.appendingPathComponent("report")
            let work = scratch.appendingPathComponent("work")
            let run = try RunningProgram(script, ["--smoke", "--binary", Executable.path, "--out", out.path, "--work", work.path],
                                         scratch: scratch, environment: Executable.childEnvironment, workingDirectory: scratch)
            return (run, out, work)
        }

        /// Processes whose command line mentions `text` (the scratch folder every child of the
        /// load test gets in its arguments).
        /// "PID command line" of every other process whose command line contains `text`.
        static func processes(mentioning text: String) -> [String] {
            let ownPID = ProcessInfo.processInfo.processIdentifier
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap(Int32.init).compactMap { pid in
                guard pid != ownPID,
                      let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
                let commandLine = String(decoding: raw.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
                return commandLine.contains(text) ? "\(pid) \(commandLine)" : nil
            }
        }
    }
}
