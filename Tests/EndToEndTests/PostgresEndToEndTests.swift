import Foundation
import PostgresTestServer
import Patience
import Programs
import Scratch
import Testing

/// The stores on a real PostgreSQL server (docs/postgresql.md), end to end through the real processes:
/// `run` with its embedded broker plus a second `consume` of the same group, SIGKILLed and
/// restarted; a batch while both consume; two `serve` replicas; the database restarted while
/// events stream in. The truth comes from the logs (`LogTruth`), never from the stores. If the
/// server cannot start, every test fails (`PostgresTestServer` throws); none is skipped.
@Suite("PostgreSQL end to end: many consumers, many readers, a database restart", .onTestThreads, .serialized)
struct PostgresEndToEndTests {
    @Test("two consume processes of one group on PostgreSQL, one SIGKILLed at random moments and restarted, count every play exactly once")
    func killedConsumerCountsExactlyOnce() async throws {
        let postgres = try PostgresTestServer.shared()
        let store = try postgres.makeDatabase()
        defer { postgres.dropDatabase(url: store) }
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            try await Self.generate(logs: logs, scratch: scratch, events: 16_000, seed: 41, duplicates: 0)
            let exact = try LogTruth(logs: logs)
            #expect(exact.duplicates == 0)

            let processes = Processes()
            do {
                let (run, broker) = try await Self.startRun(store: store, scratch: scratch, processes: processes)
                var consume = try await Self.startConsume(store: store, broker: broker, scratch: scratch, processes: processes)
                // Paced, so that the kills land while events are still arriving and being counted.
                let replay = try processes.start(["replay", "--brokers", broker, "--logs", logs.path, "--rate", "4000", "--json"],
                                                 scratch: scratch)
                var random = SystemRandomNumberGenerator()
                let kills = Int.random(in: 2...3, using: &random)
                for _ in 0..<kills {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 300...1_500, using: &random)))
                    consume.signal(SIGKILL)
                    let killed = try await consume.waitForExit(timeout: .seconds(10))
                    #expect(killed?.exited == false, "consume did not die of SIGKILL")
                    consume = try await Self.startConsume(store: store, broker: broker, scratch: scratch, processes: processes)
                }
                let produced = try await Self.finish(replay)
                #expect(produced == exact.valid)
                try await Self.waitUntilCommitted(run, events: produced)
                #expect(try Steps.totals(run, tracks: exact.trackIDs) == Self.totals(exact.plays))
                #expect(consume.isRunning, "the restarted consume stopped:\n\(consume.stderr.suffix(2_000))")
                try await Server(command: consume, port: 0).stop(timeout: .seconds(15))
                try await run.stop(timeout: .seconds(15))
            } catch {
                await processes.killAll()
                throw error
            }
        }
    }

    @Test("a batch over half the hours while both consume, then two serve replicas answer identically and by the merge rule")
    func batchWhileConsumingThenTwoReplicas() async throws {
        let postgres = try PostgresTestServer.shared()
        let store = try postgres.makeDatabase()
        defer { postgres.dropDatabase(url: store) }
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            try await Self.generate(logs: logs, scratch: scratch, events: 12_000, seed: 43, duplicates: 0.05)
            let exact = try LogTruth(logs: logs)
            let everyCopy = try RunMergeTests.countEveryCopy(logs: logs)
            #expect(exact.duplicates > 0)
            let first = TestDay.firstHour
            let covered = first..<(first + 2)

            let processes = Processes()
            do {
                let (run, broker) = try await Self.startRun(store: store, scratch: scratch, processes: processes)
                let consume = try await Self.startConsume(store: store, broker: broker, scratch: scratch, processes: processes)
                // 15 s of stream: a test's sleep can wake seconds late while other tests hold the
                // cooperative threads (a 500 ms sleep once outlasted a 6 s stream).
                let replay = try processes.start(["replay", "--brokers", broker, "--logs", logs.path, "--rate", "800", "--json"],
                                                 scratch: scratch)
                try await Task.sleep(for: .milliseconds(500))
                // The batch replaces the covered hours while both consumers keep flushing. It must
                // start mid-stream; how long it then takes on a loaded machine does not matter.
                #expect(replay.isRunning, "the stream ended before the batch started; make the replay slower")
                let batch = try await runCounterpointJSON([
                    "batch", "--store", store, "--data-dir", scratch.appendingPathComponent("batch-data").path,
                    "--logs", logs.path, "--from", Hours.text(covered.lowerBound), "--to", Hours.text(covered.upperBound), "--json",
                ], scratch: scratch)
                #expect(int(batch["counted"]) == exact.counted(hours: covered),
                        "batch summary: \(batch)")
                let produced = try await Self.finish(replay)
                #expect(produced == exact.valid)
                try await Self.waitUntilCommitted(run, events: produced)

                let replicas = [
                    try await Self.startServe(store: store, name: "serve-a", scratch: scratch, processes: processes),
                    try await Self.startServe(store: store, name: "serve-b", scratch: scratch, processes: processes),
                ]
                let merged = HistoryRankingTests.merge(exact: exact.plays, realtime: everyCopy, covered: covered)
                let dimensions = try DimensionTruth(logs: logs)
                let hours = first..<(first + 4)
                let timelineTracks = Array(exact.trackIDs.prefix(5))
                var answers: [[String: String]] = []
                for replica in replicas {
                    answers.append(try Steps.snapshot(replica, tracks: exact.trackIDs, timelineTracks: timelineTracks)
                        .mapValues { $0.replacing(/"freshness":\{[^}]*\}/, with: "") })
                    #expect(try Steps.totals(replica, tracks: exact.trackIDs) == Self.totals(merged))
                    for track in timelineTracks {
                        #expect(try Steps.hourlyTimeline(replica, track: track, hours: hours) == Self.filled(merged[track], hours: hours),
                                "timeline of track \(track)")
                    }
                    for range in [nil, hours, covered, (first + 1)..<(first + 3), (first + 2)..<(first + 4)] as [Range<Int64>?] {
                        try HistoryRankingTests.expectTop(replica, range: range, truth: merged, "port \(replica.port)")
                    }
                    // Waveforms and breakdowns by the same rule: batch blobs in covered hours, the
                    // consumers' merged blobs (every copy) elsewhere.
                    try RunMergeTests.checkDimensions(replica, dimensions, hours: hours, covered: covered)
                }
                #expect(answers[0].count == answers[1].count)
                for (target, body) in answers[0] {
                    #expect(answers[1][target] == body, "the replicas differ on \(target.prefix(100))")
                }
                for replica in replicas { try await replica.stop(timeout: .seconds(10)) }
                try await Server(command: consume, port: 0).stop(timeout: .seconds(15))
                try await run.stop(timeout: .seconds(15))
            } catch {
                await processes.killAll()
                throw error
            }
        }
    }

    @Test("waveforms and breakdowns on PostgreSQL answer 200 and equal a SQLite store's after the same batch runs")
    func dimensionAnswersLikeSQLite() async throws {
        let postgres = try PostgresTestServer.shared()
        let store = try postgres.makeDatabase()
        defer { postgres.dropDatabase(url: store) }
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            try await Self.generate(logs: logs, scratch: scratch, events: 6_000, seed: 53, duplicates: 0.02)
            let sqliteData = scratch.appendingPathComponent("sqlite-data")
            let first = TestDay.firstHour
            // The second run replaces hours the first wrote: its rollups subtract and add blobs.
            for hours in [first..<(first + 3), (first + 1)..<(first + 4)] {
                let range = ["--logs", logs.path, "--from", Hours.text(hours.lowerBound), "--to", Hours.text(hours.upperBound), "--json"]
                try await runCounterpointJSON(["batch", "--store", store, "--data-dir", scratch.appendingPathComponent("pg-data").path]
                                              + range, scratch: scratch)
                try await runCounterpointJSON(["batch", "--data-dir", sqliteData.path] + range, scratch: scratch)
            }
            let processes = Processes()
            do {
                let onPostgres = try await Self.startServe(store: store, name: "serve-pg", scratch: scratch, processes: processes)
                let onSQLite = try await Server.start(dataDirectory: sqliteData, scratch: scratch, extraArguments: ["--snapshot-age-ms", "0"])
                processes.add(onSQLite.command)
                var targets: [String] = []
                for track in [1, 2, 3, 17, 99, 999_999] {
                    for range in ["", "?from=2026-11-20T01:00:00Z&to=2026-11-20T03:00:00Z", "?from=2026-11-19T00:00:00Z&to=2026-12-02T00:00:00Z"] {
                        targets.append("/v1/tracks/\(track)/waveform\(range)")
                        targets.append("/v1/tracks/\(track)/breakdown\(range.isEmpty ? "?" : range + "&")by=country")
                    }
                    targets.append("/v1/tracks/\(track)/breakdown?by=client")
                }
                var nonEmpty = 0
                for target in targets {
                    let answers = try [onPostgres, onSQLite].map { server in
                        let response = try server.request(target)
                        #expect(response.status == 200, "\(target) → \(response.status) \(response.text.prefix(300))")
                        return response.text.replacing(/"freshness":\{[^}]*\}/, with: "")
                    }
                    #expect(answers[0] == answers[1], "PostgreSQL and SQLite differ on \(target)")
                    if !answers[0].contains(#""plays":0"#) { nonEmpty += 1 }
                }
                #expect(nonEmpty > targets.count / 2, "the answers should mostly count plays")
                try await onPostgres.stop(timeout: .seconds(10))
                try await onSQLite.stop(timeout: .seconds(10))
            } catch {
                await processes.killAll()
                throw error
            }
        }
    }

    @Test("PostgreSQL restarted mid-stream (and once while the group forms) loses nothing and doubles nothing")
    func databaseRestartMidStream() async throws {
        // A server of its own: the restart must not disturb the other tests' databases.
        let postgres = try PostgresTestServer.startPrivate()
        defer { postgres.stop() }
        let store = try postgres.makeDatabase()
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            try await Self.generate(logs: logs, scratch: scratch, events: 16_000, seed: 47, duplicates: 0)
            let exact = try LogTruth(logs: logs)

            let processes = Processes()
            do {
                let (run, broker) = try await Self.startRun(store: store, scratch: scratch, processes: processes,
                                                            waitForAssignment: false)
                // First while the group is still forming: the realtime consumer's first store call
                // after it, reading the stored offsets of its new partitions, meets a closed
                // connection. The server stays down until that read has failed, so only the stop
                // has to beat the assignment. Not before the consumer has started, its store
                // opened: `run` still preparing (its first batch run, the store's opening) is not
                // the moment this tests, and a stop there once cut the opening's COMMIT.
                let started = try await eventually(within: .seconds(90)) {
                    run.command.stderr.contains("realtime consumer started") || !run.command.isRunning
                }
                guard started, run.command.isRunning else {
                    throw CommandError(description: "run's realtime consumer did not start:\n\(run.command.stderr.suffix(2_000))")
                }
                try await Task.detached { try postgres.stopFast() }.value
                #expect(Self.assignments(run.command) < 2,
                        "the database stopped after the assignment; it should stop before")
                let retried = "reading the stored offsets of assigned partitions failed; trying again"
                let met = try await eventually(within: .seconds(90)) { run.command.stderr.contains(retried) || !run.command.isRunning }
                try await Task.detached { try postgres.start() }.value
                #expect(met && run.command.stderr.contains(retried),
                        "the assignment did not meet the stopped database:\n\(run.command.stderr.suffix(2_000))")
                try await Self.waitUntilAssigned(run)
                let replay = try processes.start(["replay", "--brokers", broker, "--logs", logs.path, "--rate", "2000", "--json"],
                                                 scratch: scratch)
                // The restart lands once the consumer has committed some of the stream, not all.
                try await Self.waitForFirstCommitThenAWhile(run)
                // Then mid-stream, between and during flushes: the stream must still run when the
                // server stops (how long it takes to start again on a loaded machine does not matter).
                try await Task.detached { try postgres.stopFast() }.value
                #expect(replay.isRunning, "the database stopped after the stream ended; make the replay slower")
                try await Task.detached { try postgres.start() }.value
                let produced = try await Self.finish(replay)
                #expect(produced == exact.valid)
                try await Self.waitUntilCommitted(run, events: produced)
                #expect(try await Self.afterRestart { try Steps.totals(run, tracks: exact.trackIDs) } == Self.totals(exact.plays))
                try await run.stop(timeout: .seconds(15))
            } catch {
                await processes.killAll()
                throw error
            }
        }
    }

    // MARK: Steps

    /// A read after a database restart: each reader thread's connection died with it and is
    /// reopened on that thread's next call, so its first answer is 503 `store_unavailable`
    /// (docs/postgresql.md); a client asks again.
    static func afterRestart<T>(_ read: () throws -> T) async throws -> T {
        for _ in 0..<50 {
            do {
                return try read()
            } catch let error as CommandError where error.description.contains("store_unavailable") {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        return try read()
    }

    static func generate(logs: URL, scratch: URL, events: Int, seed: Int, duplicates: Double) async throws {
        try await runCounterpointJSON([
            "generate", "--logs", logs.path, "--events", "\(events)", "--tracks", "150", "--hours", "4",
            "--start", TestDay.start, "--seed", "\(seed)", "--duplicates", "\(duplicates)", "--json",
        ], scratch: scratch)
    }

    /// `run --store` with its embedded broker; returns its reader and the broker's address.
    static func startRun(store: String, scratch: URL, processes: Processes,
                         waitForAssignment: Bool = true) async throws -> (Server, String) {
        let run = try processes.start([
            "run", "--store", store, "--data-dir", scratch.appendingPathComponent("run-data").path,
            "--logs", scratch.appendingPathComponent("archive").path, "--listen", "127.0.0.1:0", "--partitions", "4",
            "--flush-interval-ms", "100", "--batch-interval-seconds", "3600", "--snapshot-age-ms", "0",
            "--session-timeout-ms", Self.sessionTimeoutMilliseconds,
        ], scratch: scratch)
        let (broker, port) = try await RunMergeTests.addresses(of: run)
        let server = Server(command: run, port: port)
        if waitForAssignment { try await Self.waitUntilAssigned(server) }
        return (server, broker)
    }

    /// Waits until `run`'s archiver and realtime consumer both hold their partitions.
    static func waitUntilAssigned(_ server: Server) async throws {
        let run = server.command
        try await waitForAssignments(run, atLeast: 2)
    }

    /// How many assignments a process has logged (`run` logs its archiver's and its realtime consumer's).
    static func assignments(_ command: RunningProgram) -> Int {
        command.stderr.components(separatedBy: "[Kafka] partitions assigned").count - 1
    }

    /// Waits until `command` has logged `count` assignments. A joining member waits for the
    /// group's other members to rejoin, which on the mock cluster under a full test run's load
    /// took longer than 30 s once: the limit is generous, it only bounds a hang.
    static func waitForAssignments(_ command: RunningProgram, atLeast count: Int) async throws {
        let assigned = try await eventually(within: .seconds(90)) { assignments(command) >= count || !command.isRunning }
        guard assigned, assignments(command) >= count else {
            throw CommandError(description: "no partitions assigned to \(command.arguments.first ?? ""):\n\(command.stderr.suffix(2_000))")
        }
    }

    /// The session timeout of every member of the realtime group, `run`'s and `consume`'s
    /// alike. Short, so that the group hands a killed member's partitions on quickly, but not
    /// shorter than a rebalance on librdkafka's mock broker takes: with 1.5 s the joining
    /// member expired while it waited, and the group never settled. The same for all: the mock
    /// judges every member by the session timeout of the one that joined last, and a member
    /// it expires while holding its JoinGroup or SyncGroup request never gets an answer (its
    /// connection stays blocked), so a 4 s `consume` joining beside a 10 s `run` hung for
    /// minutes with no partitions.
    static let sessionTimeoutMilliseconds = "4000"

    /// A second member of `run`'s consumer group, on the same store, returned once it holds
    /// partitions.
    static func startConsume(store: String, broker: String, scratch: URL, processes: Processes) async throws -> RunningProgram {
        let command = try processes.start([
            "consume", "--store", store, "--data-dir", scratch.appendingPathComponent("consume-data").path,
            "--brokers", broker, "--group", "counterpoint-realtime", "--flush-interval-ms", "100",
            "--session-timeout-ms", Self.sessionTimeoutMilliseconds,
        ], scratch: scratch)
        guard let line = try await command.firstStdoutLine(timeout: .seconds(30)), line.hasPrefix("counterpoint: consuming") else {
            throw CommandError(description: "consume did not start:\n\(command.stdout)\n\(command.stderr.suffix(2_000))")
        }
        try await waitForAssignments(command, atLeast: 1)
        return command
    }

    static func startServe(store: String, name: String, scratch: URL, processes: Processes) async throws -> Server {
        let server = try await Server.start(dataDirectory: scratch.appendingPathComponent(name), scratch: scratch,
                                            extraArguments: ["--store", store, "--snapshot-age-ms", "0"])
        processes.add(server.command)
        return server
    }

    /// Waits for a replay to end successfully; returns the events it produced.
    static func finish(_ replay: RunningProgram) async throws -> Int {
        guard let result = try await replay.waitForExit(timeout: .seconds(60)) else {
            throw CommandError(description: "replay still running after 60 s")
        }
        guard result.exited, result.status == 0, let summary = result.jsonObject else {
            throw CommandError(description: "replay failed:\n\(result.summary)")
        }
        return int(summary["events"])
    }

    /// Waits until some of the stream is committed, then up to a second more (at random): a
    /// fault injected then lands mid-stream, between or during flushes.
    static func waitForFirstCommitThenAWhile(_ server: Server) async throws {
        try await eventually(within: .seconds(30)) { ((try? committed(server)) ?? 0) > 0 }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...1_000)))
    }

    /// The sum of every partition's committed next offset, as `/v1/status` reports it from the store.
    static func committed(_ server: Server) throws -> Int {
        let realtime = try server.json("/v1/status")["realtime"] as? [String: Any] ?? [:]
        return (realtime["partitions"] as? [[String: Any]] ?? []).reduce(0) { $0 + int($1["next_offset"]) }
    }

    /// Waits until the store's offsets account for every produced event (whichever consumer
    /// committed them). A status answer that fails meanwhile (the database restarting) is retried.
    static func waitUntilCommitted(_ server: Server, events: Int) async throws {
        var last = "no answer"
        let done = try await eventually(within: .seconds(120), every: .milliseconds(100)) {
            do {
                let committed = try committed(server)
                if committed == events { return true }
                last = "\(committed) of \(events) committed; status: \(try server.request("/v1/status").text.prefix(3_000))"
            } catch {
                last = "\(error)"
            }
            return false
        }
        if done { return }
        throw CommandError(description: "the consumers did not commit \(events) events in time: \(last)\n\(server.command.stderr.suffix(3_000))")
    }

    static func totals(_ plays: [Int64: [Int64: Int]]) -> [Int64: Int] {
        plays.mapValues { $0.values.reduce(0, +) }
    }

    /// Every hour of `hours`, zero where the truth has no plays (a timeline answers every hour).
    static func filled(_ byHour: [Int64: Int]?, hours: Range<Int64>) -> [Int64: Int] {
        Dictionary(uniqueKeysWithValues: hours.map { ($0, byHour?[$0] ?? 0) })
    }
}

/// Every process a test started, so that a failure leaves none behind.
final class Processes {
    private var commands: [RunningProgram] = []

    func start(_ arguments: [String], scratch: URL) throws -> RunningProgram {
        let command = try Executable.start(arguments, scratch: scratch)
        commands.append(command)
        return command
    }

    func add(_ command: RunningProgram) { commands.append(command) }

    func killAll() async {
        for command in commands { await command.killIfRunning() }
    }
}
