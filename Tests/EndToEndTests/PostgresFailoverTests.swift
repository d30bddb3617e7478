import Foundation
import Patience
import PostgresTestServer
import Scratch
import Testing

/// PostgreSQL streaming replication through the real processes (docs/postgresql.md, "Standbys
/// and failover"): a hot standby made by `pg_basebackup -R` from a primary of the test's own.
/// `serve` on the standby answers what the primary holds once replayed and never writes there;
/// with the primary stopped hard and the standby promoted, `run`, `consume` and `batch` on a
/// multi-host URI (`target_session_attrs=read-write`) follow to the new primary by themselves
/// (a `batch`, a `consume` and a `run` started while there is none wait for it), and readers follow too. The truth comes from the logs (`LogTruth`), never from the stores.
/// The standby is asynchronous, the default and the harder case: a flush the old primary
/// committed may be missing on the new one, and the offsets stored with the counts must make
/// the consumers count it again, once.
@Suite("PostgreSQL standbys and failover", .onTestThreads, .serialized)
struct PostgresFailoverTests {
    @Test("serve on a hot standby answers the primary's counts once replayed, says how far behind it is, and writes nothing there")
    func serveOnStandby() async throws {
        let (primary, standby) = try PostgresTestServer.startWithStandby(standbySettings: ["log_statement=all"])
        defer {
            standby.stop()
            primary.stop()
        }
        let store = try primary.makeDatabase()
        let empty = try primary.makeDatabase()
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            try await PostgresEndToEndTests.generate(logs: logs, scratch: scratch, events: 8_000, seed: 53, duplicates: 0)
            let exact = try LogTruth(logs: logs)
            let first = TestDay.firstHour
            let processes = Processes()
            do {
                // Counted through the primary: the realtime layer by `run`, two hours by `batch`.
                let (run, broker) = try await PostgresEndToEndTests.startRun(store: store, scratch: scratch, processes: processes)
                let replay = try processes.start(["replay", "--brokers", broker, "--logs", logs.path, "--json"], scratch: scratch)
                let produced = try await PostgresEndToEndTests.finish(replay)
                #expect(produced == exact.valid)
                try await PostgresEndToEndTests.waitUntilCommitted(run, events: produced)
                try await runCounterpointJSON([
                    "batch", "--store", store, "--data-dir", scratch.appendingPathComponent("batch-data").path,
                    "--logs", logs.path, "--from", Hours.text(first), "--to", Hours.text(first + 2), "--json",
                ], scratch: scratch)
                try await run.stop(timeout: .seconds(15))

                try await standby.waitForReplay(of: try primary.currentWALPosition())
                #expect(try standby.isInRecovery())
                let logBefore = standby.log.utf8.count
                let onStandby = try await PostgresEndToEndTests.startServe(
                    store: standby.url(database: PostgresTestServer.databaseName(of: store)), name: "serve-standby", scratch: scratch, processes: processes)
                #expect(try Steps.totals(onStandby, tracks: exact.trackIDs) == PostgresEndToEndTests.totals(exact.plays))
                let lag = try Self.freshness(onStandby)["replica_lag_ms"]
                #expect((lag as? NSNumber).map { $0.int64Value >= 0 } == true, "replica_lag_ms on a standby: \(String(describing: lag))")
                // The same answers on the primary, whose freshness has no replica lag.
                let onPrimary = try await PostgresEndToEndTests.startServe(store: store, name: "serve-primary", scratch: scratch,
                                                                           processes: processes)
                #expect(try Steps.totals(onPrimary, tracks: exact.trackIDs) == PostgresEndToEndTests.totals(exact.plays))
                #expect(try Self.freshness(onPrimary)["replica_lag_ms"] is NSNull)
                try await onPrimary.stop(timeout: .seconds(10))
                try await onStandby.stop(timeout: .seconds(10))

                // A standby of a database without the schema: refused with one line, nothing created.
                try await standby.waitForReplay(of: try primary.currentWALPosition())
                let refused = try await runCounterpoint([
                    "serve", "--store", standby.url(database: PostgresTestServer.databaseName(of: empty)), "--listen", "127.0.0.1:0",
                    "--data-dir", scratch.appendingPathComponent("serve-empty").path,
                ], scratch: scratch, timeout: .seconds(30))
                #expect(refused.exited && refused.status != 0, "serve on a standby without the schema: \(refused.summary)")
                #expect(refused.stderrMessages.contains { $0.contains("is a hot standby with schema version 0 but this program needs") },
                        "\(refused.summary)")

                // Everything the standby ran while serve was on it, by its statement log: reads only.
                let statements = String(standby.log.utf8.dropFirst(logBefore)) ?? ""
                #expect(statements.contains("realtime_counts") && statements.contains("batch_hours"), "the standby's statement log shows no read of serve's")
                let writes = statements.split(separator: "\n").filter { line in
                    line.contains(/(?i)(statement|execute [^:]*): +(INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|TRUNCATE|COPY|SELECT pg_advisory)/)
                }
                #expect(writes.isEmpty, "statements that write, on the standby: \(writes.prefix(5))")
                #expect(!statements.contains("read-only transaction"), "a write was attempted on the standby")
            } catch {
                await processes.killAll()
                throw error
            }
        }
    }

    @Test("the primary stopped hard and its standby promoted: run, consume and batch on a multi-host URI follow or, started without a primary, wait for it; readers follow; every play counted once")
    func failoverToPromotedStandby() async throws {
        let (primary, standby) = try PostgresTestServer.startWithStandby()
        defer {
            standby.stop()
            primary.stop()
        }
        let database = PostgresTestServer.databaseName(of: try primary.makeDatabase())
        let writers = PostgresTestServer.multiHostURL([primary, standby], database: database, targetSessionAttrs: "read-write")
        // The stores of a consumer (its own group, so the group above is not rebalanced) and of a
        // run (its own embedded broker) that start while there is no primary: made now, so that
        // the standby has them.
        let lateWriters = PostgresTestServer.multiHostURL([primary, standby], database: PostgresTestServer.databaseName(
            of: try primary.makeDatabase()), targetSessionAttrs: "read-write")
        let lateRunWriters = PostgresTestServer.multiHostURL([primary, standby], database: PostgresTestServer.databaseName(
            of: try primary.makeDatabase()), targetSessionAttrs: "read-write")
        try await withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs")
            try await PostgresEndToEndTests.generate(logs: logs, scratch: scratch, events: 16_000, seed: 59, duplicates: 0)
            let exact = try LogTruth(logs: logs)
            let first = TestDay.firstHour
            let covered = first..<(first + 2)
            let processes = Processes()
            do {
                let (run, broker) = try await PostgresEndToEndTests.startRun(store: writers, scratch: scratch, processes: processes)
                let consume = try await PostgresEndToEndTests.startConsume(store: writers, broker: broker, scratch: scratch,
                                                                          processes: processes)
                // One reader on whichever host answers first (the primary), one that prefers a standby.
                let readers = [
                    try await PostgresEndToEndTests.startServe(
                        store: PostgresTestServer.multiHostURL([primary, standby], database: database, targetSessionAttrs: "any"),
                        name: "serve-any", scratch: scratch, processes: processes),
                    try await PostgresEndToEndTests.startServe(
                        store: PostgresTestServer.multiHostURL([primary, standby], database: database, targetSessionAttrs: "prefer-standby"),
                        name: "serve-prefer-standby", scratch: scratch, processes: processes),
                ]
                // Slow enough that the stop usually comes mid-stream. When a loaded run ends the
                // stream first, the consumers are idle at the stop: the harder case, which
                // `StoreFailoverTests` (RealtimeTests) makes certain.
                let replay = try processes.start(["replay", "--brokers", broker, "--logs", logs.path, "--rate", "1000", "--json"],
                                                 scratch: scratch)
                try await PostgresEndToEndTests.waitForFirstCommitThenAWhile(run)
                // The standby falls behind: the flushes of the last half second reach the old
                // primary only, and the new one will not have them.
                try await standby.stopStreaming()
                try await Task.sleep(for: .milliseconds(500))
                let committedBefore = try PostgresEndToEndTests.committed(run)

                let stopped = ContinuousClock.now
                try await Task.detached { try primary.stopImmediately() }.value
                // What the new primary will hold: with the old one gone, the reader that prefers a
                // standby answers from the standby alone.
                let onStandby = try #require(try await eventualValue(within: .seconds(30)) {
                    try? PostgresEndToEndTests.committed(readers[1])
                }, "the reader on the standby did not answer")
                // A batch started while there is no primary: it waits for one.
                let batch = try processes.start([
                    "batch", "--store", writers, "--data-dir", scratch.appendingPathComponent("batch-data").path,
                    "--logs", logs.path, "--from", Hours.text(covered.lowerBound), "--to", Hours.text(covered.upperBound), "--json",
                ], scratch: scratch)
                // So do a consumer and a run: they start, say why they cannot count yet, and count
                // once there is one.
                let lateConsume = try processes.start([
                    "consume", "--store", lateWriters, "--data-dir", scratch.appendingPathComponent("late-consume-data").path,
                    "--brokers", broker, "--group", "counterpoint-late", "--flush-interval-ms", "100",
                    "--session-timeout-ms", PostgresEndToEndTests.sessionTimeoutMilliseconds,
                ], scratch: scratch)
                let lateRun = try processes.start([
                    "run", "--store", lateRunWriters, "--data-dir", scratch.appendingPathComponent("late-run-data").path,
                    "--logs", scratch.appendingPathComponent("late-archive").path, "--listen", "127.0.0.1:0", "--partitions", "4",
                    "--batch-interval-seconds", "3600", "--session-timeout-ms", PostgresEndToEndTests.sessionTimeoutMilliseconds,
                ], scratch: scratch)
                // Each has said why it waits before the promotion comes.
                let waiting = [(batch, "running it again"), (lateConsume, "only standbys answered"), (lateRun, "only standbys answered")]
                let allWaited = try await eventually(within: .seconds(30)) {
                    waiting.allSatisfy { command, line in command.stderr.contains(line) || !command.isRunning }
                }
                for (command, line) in waiting {
                    #expect(allWaited && command.stderr.contains(line),
                            "\(command.arguments.first ?? "") never said it waits for a primary:\n\(command.stderr.suffix(2_000))")
                }
                try await Task.detached { try standby.promote() }.value
                let promoted = ContinuousClock.now

                // Recovered: the consumers commit on the new primary past what it held when promoted
                // (unless it held every event already).
                var recovered: ContinuousClock.Instant?
                while onStandby < exact.valid, recovered == nil, ContinuousClock.now < promoted + .seconds(60) {
                    if let now = try? PostgresEndToEndTests.committed(run), now > onStandby { recovered = .now }
                    try await Task.sleep(for: .milliseconds(20))
                }
                let produced = try await PostgresEndToEndTests.finish(replay)
                #expect(produced == exact.valid)
                try await PostgresEndToEndTests.waitUntilCommitted(run, events: produced)

                guard let batched = try await batch.waitForExit(timeout: .seconds(60)) else {
                    throw CommandError(description: "batch still running 60 s after the failover")
                }
                #expect(batched.exited && batched.status == 0, "batch did not follow the failover: \(batched.summary)")
                #expect(int(batched.jsonObject?["counted"]) == exact.counted(hours: covered))
                try #require(lateConsume.isRunning, "the consumer started without a primary stopped:\n\(lateConsume.stderr.suffix(2_000))")
                let lateReader = try await PostgresEndToEndTests.startServe(store: lateWriters, name: "serve-late", scratch: scratch,
                                                                           processes: processes)
                try await PostgresEndToEndTests.waitUntilCommitted(lateReader, events: produced)
                #expect(try Steps.totals(lateReader, tracks: exact.trackIDs) == PostgresEndToEndTests.totals(exact.plays))
                try #require(lateRun.isRunning, "the run started without a primary stopped:\n\(lateRun.stderr.suffix(2_000))")
                let lateRunServer = Server(command: lateRun, port: try await RunMergeTests.addresses(of: lateRun).port)
                try await PostgresEndToEndTests.waitUntilAssigned(lateRunServer)

                // No duplicates in the logs: the merge rule gives the exact totals in every hour.
                let truth = PostgresEndToEndTests.totals(exact.plays)
                #expect(try await PostgresEndToEndTests.afterRestart { try Steps.totals(run, tracks: exact.trackIDs) } == truth)
                for reader in readers {
                    #expect(try await PostgresEndToEndTests.afterRestart { try Steps.totals(reader, tracks: exact.trackIDs) } == truth,
                            "reader on port \(reader.port)")
                    #expect(try await PostgresEndToEndTests.afterRestart { try Self.freshness(reader)["replica_lag_ms"] } is NSNull)
                }
                #expect(consume.isRunning, "consume stopped:\n\(consume.stderr.suffix(2_000))")
                #expect(run.command.isRunning, "run stopped:\n\(run.command.stderr.suffix(2_000))")
                // How the consumers learnt what the new primary lacked (a fenced flush, or offsets
                // read again after a failed one) is theirs to choose; the totals above show the result.
                let fenced = [run.command, consume].reduce(0) { $0 + $1.stderr.components(separatedBy: "flush discarded").count - 1 }
                print("failover: \(produced) events, \(committedBefore) committed on the primary when it stopped, \(onStandby) on the " +
                      "standby; promoted after \(promoted - stopped); consumers committing again " +
                      "\(recovered.map { "\($0 - stopped)" } ?? "never") after the stop; \(fenced) flushes fenced")
                // A loaded run can end the stream before the standby falls behind: then the new
                // primary lacks nothing and there is nothing to commit again (the idle case with
                // commits lost is `StoreFailoverTests`, RealtimeTests).
                if onStandby < exact.valid {
                    #expect(recovered != nil, "the consumers did not commit on the new primary")
                }

                for reader in readers + [lateReader] { try await reader.stop(timeout: .seconds(10)) }
                try await Server(command: lateConsume, port: 0).stop(timeout: .seconds(15))
                try await lateRunServer.stop(timeout: .seconds(15))
                try await Server(command: consume, port: 0).stop(timeout: .seconds(15))
                try await run.stop(timeout: .seconds(15))
            } catch {
                await processes.killAll()
                throw error
            }
        }
    }

    /// The `freshness` object of `/v1/status`.
    static func freshness(_ server: Server) throws -> [String: Any] {
        try server.json("/v1/status")["freshness"] as? [String: Any] ?? [:]
    }
}
