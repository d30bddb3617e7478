import Foundation
import Patience
import Programs
import Scratch
import Testing

/// `run --embedded-faults`: the faults of the Kafka drills injected into run's own broker, as
/// the load test uses them (see docs/faults.md).
@Suite("run with faults injected into its embedded broker", .onTestThreads, .serialized)
struct EmbeddedFaultTests {
    /// The whole cluster down from 20 s to 28 s (after start-up, before any event: under the full
    /// suite run's clients took 18 s to be made, and a client made while the cluster is down only
    /// waits for it; 8 s long, to be seen on a loaded machine), then, while events flow, leaders
    /// and the coordinator move and requests fail in bursts.
    static let schedule = "20:down:all:8,30:leaders,31:errors:fetch:20,31:errors:heartbeat:3,32:errors:join-group:1,"
        + "32:errors:sync-group:1,32:errors:offset-commit:10,33:coordinator:2,34:slow:fetch:10:300,35:leaders"

    @Test("while its embedded cluster cannot be reached run says so in /readyz, /v1/status and the log, recovers by itself, and ends with exact counts and a complete archive")
    func runThroughFaults() async throws {
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            let archive = scratch.appendingPathComponent("archive")
            try await Steps.generate(into: logs, scratch: scratch, events: 10_000, tracks: 500, seed: 21)
            let truth = try LogTruth(logs: logs)

            let run = try Executable.start([
                "run", "--data-dir", scratch.appendingPathComponent("data").path, "--logs", archive.path,
                "--listen", "127.0.0.1:0", "--partitions", "6", "--flush-interval-ms", "100",
                "--batch-interval-seconds", "100000", "--embedded-faults", Self.schedule,
            ], scratch: scratch)
            // The outage lasts 8 s, from 20 s after start-up: a thread of its own watches from
            // the start, as a dashboard would, however late this task runs.
            let output = run.stdoutURL
            let watch = Sampler {
                let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
                return RunMergeTests.announcedAddresses(in: text).flatMap { Sighting(port: $0.port) }
            }
            do {
                let (broker, port) = try await RunMergeTests.addresses(of: run)
                let server = Server(command: run, port: port)
                let connections = ["consumer Kafka connection", "archiver Kafka connection"]
                // /readyz answers 503 during run's preparation too ("run is starting: …"): the
                // outage's own 503 is the one that names the Kafka connections.
                let outageNotReady: @Sendable (Sighting) -> Bool = { $0.readyStatus == 503 && $0.readyMessage?.contains("Kafka connection") == true }
                let outageSeen = try await eventually(within: .seconds(60)) {
                    connections.allSatisfy { name in watch.first { $0.degraded[name] != nil } != nil }
                        && watch.first(where: outageNotReady) != nil
                }
                #expect(outageSeen, "the outage was not shown: \(watch.seen.suffix(3))")
                for component in connections {
                    let sighting = watch.first { $0.degraded[component] != nil }
                    #expect(sighting?.degraded[component]?.contains("brokers are down") == true, "\(String(describing: sighting))")
                }
                #expect(watch.first(where: outageNotReady) != nil, "\(watch.seen.filter { $0.readyStatus == 503 }.suffix(3))")
                watch.stop()
                try await Drill.waitForComponent(server, "consumer Kafka connection", state: "running", timeout: .seconds(30))
                try await Drill.waitForComponent(server, "archiver Kafka connection", state: "running", timeout: .seconds(30))

                // 10,000 events over about five seconds, through the faults from 30 s on.
                try await runCounterpointJSON(["replay", "--brokers", broker, "--logs", logs.path, "--rate", "2000", "--json"],
                                              scratch: scratch)
                try await RunMergeTests.waitUntilConsumed(server, events: truth.valid)
                let totals = try Steps.totals(server, tracks: truth.trackIDs)
                for track in truth.trackIDs {
                    #expect(totals[track] == truth.plays(of: track), "track \(track)")
                }
                // The archiver is at-least-once (docs/architecture.md): after an offset commit the
                // outage refused, a rebalance can archive some events again. Complete means every
                // event there, as the batch layer reads it: the archive's distinct plays are the logs'.
                do {
                    try await Drill.waitUntil(timeout: .seconds(30)) {
                        (try? LogTruth(logs: archive))?.plays == truth.plays
                    }
                } catch {
                    let archived = (try? LogTruth(logs: archive))?.counted ?? 0
                    throw CommandError(description: "the archive holds \(archived) of \(truth.counted) distinct events 30 s after every one was counted:\n"
                        + "\(run.stderr.split(separator: "\n").filter { $0.contains("rchiv") }.suffix(30).joined(separator: "\n"))")
                }
                #expect(try server.request("/readyz").status == 200)
                try await server.stop(timeout: .seconds(15))
                let injected = run.stderr.split(separator: "\n").filter { $0.contains("kafka fault injected") }
                #expect(injected.count == 10, "\(injected)")
                #expect(run.stderr.contains("kafka faults injected"))
            } catch {
                await run.killIfRunning()
                throw error
            }
        }
    }
}

/// What `/v1/status` and `/readyz` said at one moment: the degraded components with their
/// reasons, and the readiness answer.
private struct Sighting: Sendable, CustomStringConvertible {
    let degraded: [String: String]
    let readyStatus: Int
    let readyMessage: String?

    /// Nil when either request fails.
    init?(port: Int) {
        let client = HTTPClient(port: port)
        guard let status = try? client.request("/v1/status").jsonObject, let ready = try? client.request("/readyz") else { return nil }
        var degraded: [String: String] = [:]
        for component in status["components"] as? [[String: Any]] ?? [] where component["state"] as? String == "degraded" {
            if let name = component["name"] as? String { degraded[name] = component["reason"] as? String ?? "" }
        }
        self.degraded = degraded
        readyStatus = ready.status
        readyMessage = ready.errorMessage
    }

    var description: String { "degraded: \(degraded), /readyz: \(readyStatus) \(readyMessage ?? "")" }
}
