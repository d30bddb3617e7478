import Foundation
import Kafka
import Logging
import Patience
import Programs
import Scratch
import Testing

/// The full-disk-at-start drills (see docs/faults.md) on a real, small tmpfs: `consume` and
/// `run` start on an existing store when the disk is already full — with the store's `-wal`
/// and `-shm` files left by a killed process, and without them after a clean stop — say why
/// they cannot flush, and count everything once space returns.
@Suite("a full disk at start loses nothing", .onTestThreads, .serialized,
       .enabled(if: SmallDisk.mountingAllowed, "mounting a tmpfs needs root; CI and the sessions run as root"))
struct FullDiskAtStartTests {
    /// How the previous process left the store: killed (its `-wal` and `-shm` files stay) or
    /// stopped cleanly (SQLite removes them).
    enum Leftovers: String, CustomStringConvertible, CaseIterable {
        case killed, stoppedCleanly
        var signal: Int32 { self == .killed ? SIGKILL : SIGTERM }
        var description: String { rawValue }
    }

    @Test("consume starts on a full disk with an existing store, says why it cannot flush, and counts everything once space returns",
          arguments: Leftovers.allCases)
    func consumeStartsOnFullDisk(_ leftovers: Leftovers) async throws {
        try await Self.withDrill(seed: 30) { scratch, disk, drill, data in
            let arguments = ["consume", "--brokers", drill.cluster.bootstrapServers, "--data-dir", data.path,
                             "--flush-interval-ms", "100"]

            let first = try Executable.start(arguments, scratch: scratch)
            do {
                try await drill.replay(0, scratch: scratch)
                try await withServer(dataDirectory: data, scratch: scratch) { try await Self.waitUntilStored($0, events: drill.events(0)) }
                try await Self.stop(first, leaving: leftovers, data: data)
            } catch {
                await first.killIfRunning()
                throw error
            }

            try disk.fill()
            let second = try Executable.start(arguments, scratch: scratch)
            do {
                try await drill.replay(1, scratch: scratch)
                try await Drill.waitUntil(timeout: .seconds(60)) { Self.saysWhyItCannotFlush(second.stderr) }
                #expect(second.isRunning, "\(second.stderr.suffix(2_000))")

                try disk.free()
                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    try await Self.waitUntilStored(server, events: drill.events(0) + drill.events(1))
                    try drill.checkTotals(server)
                }
                second.signal(SIGTERM)
                let exit = try await second.waitForExit(timeout: .seconds(15))
                #expect(exit?.exited == true && exit?.status == 0, "\(second.stderr.suffix(2_000))")
            } catch {
                await second.killIfRunning()
                throw error
            }
        }
    }

    @Test("run starts on a full disk with an existing store, says why it cannot flush in /readyz, /v1/status and the log, and counts everything once space returns",
          arguments: Leftovers.allCases)
    func runStartsOnFullDisk(_ leftovers: Leftovers) async throws {
        try await Self.withDrill(seed: 40) { scratch, disk, drill, data in
            // Each run archives into its own folder, so the batch at start finds no closed hours to cover.
            func arguments(_ run: Int) -> [String] {
                ["run", "--brokers", drill.cluster.bootstrapServers, "--data-dir", data.path,
                 "--logs", scratch.appendingPathComponent("archive-\(run)").path, "--listen", "127.0.0.1:0",
                 "--flush-interval-ms", "100", "--batch-interval-seconds", "100000"]
            }

            let first = try Executable.start(arguments(1), scratch: scratch)
            do {
                let server = Server(command: first, port: try await Self.port(of: first))
                try await drill.replay(0, scratch: scratch)
                try await Self.waitUntilStored(server, events: drill.events(0))
                try await Self.stop(first, leaving: leftovers, data: data)
            } catch {
                await first.killIfRunning()
                throw error
            }

            try disk.fill()
            let second = try Executable.start(arguments(2), scratch: scratch)
            do {
                let server = Server(command: second, port: try await Self.port(of: second))
                try await drill.replay(1, scratch: scratch)
                try await Self.waitUntilDegradedForFlushes(server)
                let ready = try server.request("/readyz")
                #expect(ready.status == 503)
                #expect(ready.errorMessage?.contains("consumer") == true, "\(ready.text)")
                #expect(ready.errorMessage?.contains("no free space on \(data.path)") == true, "\(ready.text)")
                #expect(Self.saysWhyItCannotFlush(second.stderr), "\(second.stderr.suffix(2_000))")

                try disk.free()
                try await Self.waitUntilStored(server, events: drill.events(0) + drill.events(1))
                try await Drill.waitForComponent(server, "consumer", state: "running")
                try drill.checkTotals(server)
                #expect(try server.request("/readyz").status == 200)
                try await server.stop(timeout: .seconds(15))
            } catch {
                await second.killIfRunning()
                throw error
            }
        }
    }

    @Test("run on its embedded broker starts on a full disk with an earlier run's store, and counts every event of its new broker once space returns",
          arguments: Leftovers.allCases)
    func embeddedRunStartsOnFullDisk(_ leftovers: Leftovers) async throws {
        try await Self.withDrill(seed: 50) { scratch, disk, drill, data in
            func arguments(_ run: Int) -> [String] {
                ["run", "--data-dir", data.path, "--logs", scratch.appendingPathComponent("archive-\(run)").path,
                 "--listen", "127.0.0.1:0", "--partitions", "4", "--flush-interval-ms", "100", "--batch-interval-seconds", "100000"]
            }
            func replay(_ set: Int, to broker: String) async throws {
                try await runCounterpointJSON(["replay", "--brokers", broker, "--logs", drill.logs[set].path, "--json"], scratch: scratch)
            }

            let first = try Executable.start(arguments(1), scratch: scratch)
            do {
                let (broker, port) = try await RunMergeTests.addresses(of: first)
                try await replay(0, to: broker)
                try await Self.waitUntilStored(Server(command: first, port: port), events: drill.events(0))
                try await Self.stop(first, leaving: leftovers, data: data)
            } catch {
                await first.killIfRunning()
                throw error
            }

            // The second run's broker is new and empty; its events outnumber the offsets the
            // first one stored, which it must neither start from nor need room to forget.
            try disk.fill()
            let second = try Executable.start(arguments(2), scratch: scratch)
            do {
                let (broker, port) = try await RunMergeTests.addresses(of: second)
                let server = Server(command: second, port: port)
                try await replay(1, to: broker)
                try await Self.waitUntilDegradedForFlushes(server)

                try disk.free()
                try await Self.waitUntilStored(server, events: drill.events(1))
                try await Drill.waitForComponent(server, "consumer", state: "running")
                try drill.checkTotals(server)
                let gaps = try #require((server.json("/v1/status")["realtime"] as? [String: Any])?["offset_gaps"] as? [Any])
                #expect(gaps.isEmpty, "\(gaps)")
                try await server.stop(timeout: .seconds(15))
            } catch {
                await second.killIfRunning()
                throw error
            }
        }
    }

    /// A mock cluster and two sets of events: one counted before the disk fills, one after.
    struct Events {
        let cluster: KafkaMockCluster
        let logs: [URL]
        let truths: [LogTruth]

        func events(_ set: Int) -> Int { truths[set].valid }

        func replay(_ set: Int, scratch: URL) async throws {
            try await runCounterpointJSON(["replay", "--brokers", cluster.bootstrapServers, "--logs", logs[set].path, "--json"],
                                          scratch: scratch)
        }

        func checkTotals(_ server: Server) throws {
            let tracks = Array(Set(truths.flatMap(\.trackIDs))).sorted()
            let totals = try Steps.totals(server, tracks: tracks)
            for track in tracks {
                #expect(totals[track] == truths[0].plays(of: track) + truths[1].plays(of: track), "track \(track)")
            }
        }
    }

    /// Runs `body` with a scratch folder, a small disk, the events (`seed`) and the data
    /// directory on the disk.
    static func withDrill(seed: Int, _ body: (URL, SmallDisk, Events, URL) async throws -> Void) async throws {
        try await withTemporaryDirectory { scratch in
            try await withSmallDisk(megabytes: 8, under: scratch) { disk in
                try await body(scratch, disk, try await prepare(scratch: scratch, seed: seed), disk.root.appendingPathComponent("data"))
            }
        }
    }

    static func prepare(scratch: URL, seed: Int) async throws -> Events {
        let cluster = try KafkaMockCluster(logger: Logger(label: "full-disk") { _ in SwiftLogNoOpLogHandler() })
        try cluster.createTopic("plays", partitions: 4)
        let logs = [scratch.appendingPathComponent("before"), scratch.appendingPathComponent("during")]
        try await Steps.generate(into: logs[0], scratch: scratch, events: 2_000, tracks: 50, seed: seed)
        try await Steps.generate(into: logs[1], scratch: scratch, events: 5_000, tracks: 500, seed: seed + 1)
        return Events(cluster: cluster, logs: logs, truths: [try LogTruth(logs: logs[0]), try LogTruth(logs: logs[1])])
    }

    /// Ends a process as `leftovers` says and checks that the store's files are as expected.
    static func stop(_ command: RunningProgram, leaving leftovers: Leftovers, data: URL) async throws {
        command.signal(leftovers.signal)
        let exit = try await command.waitForExit(timeout: .seconds(15))
        #expect(exit != nil, "\(command.stderr.suffix(2_000))")
        let store = data.appendingPathComponent("realtime.sqlite").path
        #expect(FileManager.default.fileExists(atPath: store))
        for suffix in ["-wal", "-shm"] {
            #expect(FileManager.default.fileExists(atPath: store + suffix) == (leftovers == .killed), "\(suffix) after \(leftovers)")
        }
    }

    /// Waits until `/v1/status` shows the consumer degraded for why it cannot flush, the full
    /// disk named (between attempts it may also say it restarted).
    static func waitUntilDegradedForFlushes(_ server: Server) async throws {
        try await Drill.waitUntil(timeout: .seconds(60)) {
            let components = try server.json("/v1/status")["components"] as? [[String: Any]] ?? []
            let consumer = components.first { $0["name"] as? String == "consumer" }
            let reason = consumer?["reason"] as? String ?? ""
            return consumer?["state"] as? String == "degraded" && reason.contains("flush") && reason.contains("no free space on ")
        }
    }

    /// The log says the consumer is degraded because it cannot flush, for want of free space.
    static func saysWhyItCannotFlush(_ log: String) -> Bool {
        log.split(separator: "\n").contains {
            $0.contains("component degraded") && $0.contains("component=consumer") && $0.contains("flush") && $0.contains("no free space on ")
        }
    }

    /// Waits until the realtime store's offsets add up to `events`, as `/v1/status` reports them.
    static func waitUntilStored(_ server: Server, events: Int) async throws {
        try await Drill.waitUntil(timeout: .seconds(90)) {
            let realtime = try server.json("/v1/status")["realtime"] as? [String: Any] ?? [:]
            let partitions = realtime["partitions"] as? [[String: Any]] ?? []
            return partitions.reduce(0) { $0 + int($1["next_offset"]) } == events
        }
    }

    /// The reader's port, from `run`'s announcement.
    static func port(of run: RunningProgram) async throws -> Int {
        try await Drill.waitUntil(timeout: .seconds(30)) {
            run.stdout.contains("reader listening on") || !run.isRunning
        }
        guard let port = run.stdout.firstMatch(of: /reader listening on http:\/\/127\.0\.0\.1:([0-9]+)\//)?.1 else {
            throw CommandError(description: "run did not announce its reader:\n\(run.stdout)\n\(run.stderr.suffix(2_000))")
        }
        return Int(port)!
    }
}
