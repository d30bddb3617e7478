import Foundation
import Patience
import Programs
import Scratch
import Testing

/// The full-disk drills of docs/runbook.md on a real, small tmpfs: a reader needs no free space, a
/// batch fails without changing anything, the realtime layer loses and doubles nothing across
/// a full disk, and an archiver that cannot write is never silent — and everything resumes
/// when space returns.
extension RunEndToEnd {
    @Suite("a full disk loses nothing", .serialized,
           .enabled(if: SmallDisk.mountingAllowed, "mounting a tmpfs needs root; CI and the sessions run as root"))
    struct FullDiskTests {
        @Test("serve starts on a full disk and answers exactly what the stores hold")
        func readerServesOnFullDisk() async throws {
            try await withTemporaryDirectory { scratch in
                try await withSmallDisk(megabytes: 8, under: scratch) { disk in
                    let logs = scratch.appendingPathComponent("logs")
                    let data = disk.root.appendingPathComponent("data")
                    try await Steps.generate(into: logs, scratch: scratch, events: 3_000, tracks: 40, seed: 5)
                    try await Steps.batch(logs: logs, data: data, scratch: scratch)
                    let truth = try LogTruth(logs: logs)
                    try disk.fill()

                    // The realtime store was never written: there is no file, and no room for one.
                    try await withServer(dataDirectory: data, scratch: scratch) { server in
                        #expect(try server.request("/readyz").status == 200)
                        let totals = try Steps.totals(server, tracks: truth.trackIDs)
                        for track in truth.trackIDs {
                            #expect(totals[track] == truth.plays(of: track), "track \(track)")
                        }
                        #expect(try server.json("/v1/status")["batch"] != nil)
                    }
                }
            }
        }

        @Test("run --demo and generate refuse a history their disk cannot hold, with one line and nothing written")
        func historyThatCannotFitIsRefused() async throws {
            try await withTemporaryDirectory { scratch in
                try await withSmallDisk(megabytes: 8, under: scratch) { disk in
                    let data = disk.root.appendingPathComponent("data")
                    let run = try await runCounterpoint(["run", "--demo", "--demo-rate", "20000", "--data-dir", data.path,
                                                         "--listen", "127.0.0.1:0"], scratch: scratch, timeout: .seconds(60))
                    #expect(run.status == 1, "\(run.summary)")
                    // About 234 MB: a million events of ~232 bytes, and the demo's 1 % duplicates.
                    #expect(run.stderrMessages.count == 1
                            && run.stderrMessages[0].contains(/would take about 2[0-9][0-9] MB but .* has [0-9] MB free; nothing was written/),
                            "\(run.summary)")
                    let generate = try await runCounterpoint(["generate", "--logs", disk.root.appendingPathComponent("logs").path,
                                                              "--events", "100000"], scratch: scratch)
                    #expect(generate.status == 1 && generate.stderrMessages.count == 1, "\(generate.summary)")
                    #expect(generate.stderrMessages.first?.contains("would take about 23 MB") == true, "\(generate.summary)")
                    // Not one hour file: the refusal came before the first byte.
                    let written = FileManager.default.enumerator(atPath: disk.root.path)?.allObjects.compactMap { $0 as? String } ?? []
                    #expect(written.allSatisfy { !$0.hasSuffix(".ndjson") }, "\(written)")
                }
            }
        }

        @Test("a batch on a full disk fails with one line and leaves the old counts")
        func batchFailsCleanly() async throws {
            try await withTemporaryDirectory { scratch in
                try await withSmallDisk(megabytes: 8, under: scratch) { disk in
                    let first = scratch.appendingPathComponent("first")
                    let second = scratch.appendingPathComponent("second")
                    let data = disk.root.appendingPathComponent("data")
                    try await Steps.generate(into: first, scratch: scratch, events: 2_000, tracks: 30, seed: 6)
                    try await Steps.generate(into: second, scratch: scratch, events: 20_000, tracks: 3_000, seed: 7)
                    try await Steps.batch(logs: first, data: data, scratch: scratch)
                    let truth = try LogTruth(logs: first)
                    try disk.fill()

                    let failed = try await runCounterpoint(["batch", "--logs", second.path, "--data-dir", data.path],
                                                           scratch: scratch)
                    #expect(failed.exited && failed.status != 0, "\(failed.summary)")
                    #expect(failed.stderrMessages.count == 1, "one line: \(failed.stderrMessages)")
                    #expect(failed.stderrMessages.first?.contains("no free space on \(data.path)") == true, "\(failed.stderrMessages)")
                    try await withServer(dataDirectory: data, scratch: scratch) { server in
                        let totals = try Steps.totals(server, tracks: truth.trackIDs)
                        for track in truth.trackIDs {
                            #expect(totals[track] == truth.plays(of: track), "track \(track)")
                        }
                    }
                }
            }
        }

        @Test("the realtime layer keeps exact counts across a full disk, says so while full, and catches up when space returns")
        func realtimeExactAcrossFullDisk() async throws {
            try await withTemporaryDirectory { scratch in
                try await withSmallDisk(megabytes: 8, under: scratch) { disk in
                    let before = scratch.appendingPathComponent("before")
                    let during = scratch.appendingPathComponent("during")
                    try await Steps.generate(into: before, scratch: scratch, events: 2_000, tracks: 50, seed: 8)
                    try await Steps.generate(into: during, scratch: scratch, events: 30_000, tracks: 4_000, seed: 9)
                    let truths = [try LogTruth(logs: before), try LogTruth(logs: during)]

                    let run = try Executable.start([
                        "run", "--data-dir", disk.root.appendingPathComponent("data").path,
                        "--logs", scratch.appendingPathComponent("archive").path, "--listen", "127.0.0.1:0",
                        "--partitions", "4", "--flush-interval-ms", "100", "--batch-interval-seconds", "100000",
                    ], scratch: scratch)
                    do {
                        let (broker, port) = try await RunMergeTests.addresses(of: run)
                        let server = Server(command: run, port: port)
                        try await runCounterpointJSON(["replay", "--brokers", broker, "--logs", before.path, "--json"],
                                                      scratch: scratch)
                        try await RunMergeTests.waitUntilConsumed(server, events: truths[0].valid)

                        try disk.fill()
                        try await runCounterpointJSON(["replay", "--brokers", broker, "--logs", during.path, "--json"],
                                                      scratch: scratch)
                        let degraded = try await Drill.waitForComponent(server, "consumer", state: "degraded")
                        #expect((degraded["reason"] as? String)?.contains("re-read") == true, "\(degraded)")
                        #expect((degraded["reason"] as? String)?.contains("no free space on \(disk.root.appendingPathComponent("data").path)") == true, "\(degraded)")
                        #expect(try server.request("/readyz").status == 503)

                        try disk.free()
                        try await RunMergeTests.waitUntilConsumed(server, events: truths[0].valid + truths[1].valid)
                        _ = try await Drill.waitForComponent(server, "consumer", state: "running")
                        #expect(try server.request("/readyz").status == 200)

                        let tracks = Array(Set(truths[0].trackIDs + truths[1].trackIDs)).sorted()
                        let totals = try Steps.totals(server, tracks: tracks)
                        for track in tracks {
                            let expected = truths[0].plays(of: track) + truths[1].plays(of: track)
                            #expect(totals[track] == expected, "track \(track)")
                        }
                        try await server.stop(timeout: .seconds(15))
                    } catch {
                        await run.killIfRunning()
                        throw error
                    }
                }
            }
        }

        @Test("an archiver that cannot write turns /readyz non-200, shows its reason in /v1/status and /metrics, and resumes when space returns")
        func archiverFailureIsNeverSilent() async throws {
            try await withTemporaryDirectory { scratch in
                try await withSmallDisk(megabytes: 8, under: scratch) { disk in
                    let events = scratch.appendingPathComponent("events")
                    try await Steps.generate(into: events, scratch: scratch, events: 5_000, tracks: 100, seed: 10)
                    let truth = try LogTruth(logs: events)
                    let archive = disk.root.appendingPathComponent("archive")
                    try disk.fill()

                    let run = try Executable.start([
                        "run", "--data-dir", scratch.appendingPathComponent("data").path, "--logs", archive.path,
                        "--listen", "127.0.0.1:0", "--partitions", "2", "--batch-interval-seconds", "100000",
                    ], scratch: scratch)
                    do {
                        let (broker, port) = try await RunMergeTests.addresses(of: run)
                        let server = Server(command: run, port: port)
                        try await runCounterpointJSON(["replay", "--brokers", broker, "--logs", events.path, "--json"],
                                                      scratch: scratch)
                        let degraded = try await Drill.waitForComponent(server, "archiver", state: "degraded")
                        #expect((degraded["reason"] as? String)?.contains("No space left on device") == true, "\(degraded)")
                        #expect((degraded["reason"] as? String)?.contains("no free space on ") == true, "\(degraded)")
                        let ready = try server.request("/readyz")
                        #expect(ready.status == 503)
                        #expect(ready.errorMessage?.contains("archiver") == true, "\(ready.text)")
                        let metrics = try server.request("/metrics").text
                        #expect(metrics.contains(#"counterpoint_component_up{component="archiver"} 0"#))
                        #expect(metrics.contains(#"counterpoint_component_problem_info{component="archiver""#))

                        try disk.free()
                        _ = try await Drill.waitForComponent(server, "archiver", state: "running", timeout: .seconds(90))
                        #expect(try server.request("/readyz").status == 200)
                        // Nothing the archiver failed to write was committed: every event is in the logs.
                        try await Drill.waitUntil(timeout: .seconds(30)) {
                            (try? LogTruth(logs: archive))?.valid == truth.valid
                        }
                        try await server.stop(timeout: .seconds(15))
                    } catch {
                        await run.killIfRunning()
                        throw error
                    }
                }
            }
        }
    }
}

/// Waiting steps of the drills.
enum Drill {
    /// Waits until `/v1/status` lists `component` in `state`; returns its entry.
    @discardableResult
    static func waitForComponent(_ server: Server, _ component: String, state: String,
                                 timeout: Duration = .seconds(60)) async throws -> [String: Any] {
        var last: [[String: Any]] = []
        let entry = try await eventualValue(within: timeout, every: .milliseconds(100)) { () -> [String: Any]? in
            last = try server.json("/v1/status")["components"] as? [[String: Any]] ?? []
            return last.first { $0["name"] as? String == component && $0["state"] as? String == state }
        }
        if let entry { return entry }
        throw CommandError(description: "\(component) did not become \(state) in \(timeout): \(last)")
    }

    static func waitUntil(timeout: Duration, _ condition: () throws -> Bool) async throws {
        if try await eventually(within: timeout, every: .milliseconds(200), condition) { return }
        throw CommandError(description: "condition not met in \(timeout)")
    }
}
