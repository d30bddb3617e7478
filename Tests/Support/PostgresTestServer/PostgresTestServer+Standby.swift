import Foundation
import Patience
import PostgresDB

/// Streaming replication for the failover and standby tests: a hot standby made from a
/// primary by `pg_basebackup -R` (which writes `primary_conninfo` and `standby.signal`), the
/// primary stopped hard, the standby promoted, and waits on replay.
///
/// `initdb` already allows replication connections from 127.0.0.1 (its `pg_hba.conf` has
/// `host replication all 127.0.0.1/32 trust`), and PostgreSQL 15 defaults to
/// `wal_level=replica`, `max_wal_senders=10`, `hot_standby=on`; the primary states the first
/// two anyway (`replicationSettings`), so the tests say what they rely on.
extension PostgresTestServer {
    /// Settings a primary that feeds standbys starts with.
    public static let replicationSettings = ["wal_level=replica", "max_wal_senders=10", "wal_keep_size=64MB"]

    /// A primary of its own (`startPrivate` with `replicationSettings`) and a hot standby of
    /// it; `stop()` both when done.
    public static func startWithStandby(standbySettings: [String] = []) throws -> (primary: PostgresTestServer, standby: PostgresTestServer) {
        let primary = try startPrivate(settings: replicationSettings)
        do {
            return (primary, try primary.makeStandby(settings: standbySettings))
        } catch {
            primary.stop()
            throw error
        }
    }

    /// A hot standby of this server, streaming from it, on a free port of its own; `stop()` it
    /// when done. `settings` are its extra `-c` settings (a standby does not inherit the
    /// primary's command-line settings, only its configuration files).
    public func makeStandby(settings: [String] = []) throws -> PostgresTestServer {
        let standbyDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("counterpoint-pg-standby-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: standbyDirectory, withIntermediateDirectories: true)
        if let runAs {
            try Self.run("/bin/chown", [runAs, standbyDirectory], what: "chown the standby directory to \(runAs)")
        }
        // -X stream: the WAL written while the backup runs comes with it; -c fast: an immediate checkpoint.
        try Self.run(binaries + "/pg_basebackup", ["-D", standbyDirectory + "/data", "-h", "127.0.0.1", "-p", "\(port)",
                                                   "-U", "postgres", "-R", "-X", "stream", "-c", "fast", "--no-sync"],
                     runAs: runAs, what: "pg_basebackup")
        let standby = PostgresTestServer(copyIn: standbyDirectory, port: try Self.freePort(), binaries: binaries,
                                         runAs: runAs, settings: settings)
        try standby.start()
        return standby
    }

    /// `pg_ctl stop -m immediate`: the server quits at once without a checkpoint, as in a crash
    /// or a lost machine; clients see their connections reset. The directory stays (its log can
    /// be read) until `stop()`.
    public func stopImmediately() throws {
        try Self.run(binaries + "/pg_ctl", ["-D", directory + "/data", "-w", "-m", "immediate", "stop"],
                     runAs: runAs, what: "pg_ctl stop -m immediate")
    }

    /// `pg_ctl promote`: the standby leaves recovery and accepts writes; returns once it has.
    public func promote() throws {
        try Self.run(binaries + "/pg_ctl", ["-D", directory + "/data", "-w", "-t", "60", "promote"],
                     runAs: runAs, what: "pg_ctl promote")
    }

    /// Stops this standby's streaming from its primary (an empty `primary_conninfo`, reloaded):
    /// what the primary commits from now on never reaches it, as with an asynchronous standby
    /// that had fallen behind when its primary was lost. Returns once its WAL receiver is gone
    /// (the reload takes effect a moment later).
    public func stopStreaming() async throws {
        let connection = try PostgresConnection(url: url(database: "postgres"))
        try connection.execute("ALTER SYSTEM SET primary_conninfo = ''")
        try connection.execute("SELECT pg_reload_conf()")
        let stopped = try await eventually(within: .seconds(30)) {
            try connection.query("SELECT count(*) FROM pg_stat_wal_receiver").string(row: 0, column: 0) == "0"
        }
        guard stopped else { throw TestServerError(message: "the standby on port \(port) still streams 30 s after primary_conninfo was cleared") }
    }

    /// The primary's current WAL insert position (`pg_current_wal_insert_lsn()`), e.g.
    /// "0/3000148": past every commit made so far. Not `pg_current_wal_lsn()`, the position
    /// written out: the realtime store commits with `synchronous_commit = off`, so its last
    /// commit may still sit in the WAL buffers, and a standby that replayed up to the written
    /// position could lack it (a test failed about one time in four so).
    public func currentWALPosition() throws -> String {
        try PostgresConnection(url: url(database: "postgres")).query("SELECT pg_current_wal_insert_lsn()::text").string(row: 0, column: 0)
    }

    /// True while the server is a standby (`pg_is_in_recovery()`).
    public func isInRecovery() throws -> Bool {
        try PostgresConnection(url: url(database: "postgres")).query("SELECT pg_is_in_recovery()").string(row: 0, column: 0) == "t"
    }

    /// Waits until this standby has replayed the primary's WAL up to `position` (a
    /// `currentWALPosition()` of the primary), polling; throws after `timeout`.
    public func waitForReplay(of position: String, timeout: Duration = .seconds(30)) async throws {
        let connection = try PostgresConnection(url: url(database: "postgres"))
        let replayed = try await eventually(within: timeout) {
            try connection.query("SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", [position])
                .string(row: 0, column: 0) == "t"
        }
        guard replayed else {
            throw TestServerError(message: "the standby on port \(port) did not replay up to \(position) in \(timeout)")
        }
    }

    /// The server's log so far (with `log_statement=all`, every statement it ran).
    public var log: String {
        (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
    }

    /// A libpq multi-host URI of `database` over `servers`, tried in order, with
    /// `target_session_attrs` (e.g. "read-write", "prefer-standby", "any").
    public static func multiHostURL(_ servers: [PostgresTestServer], database: String, targetSessionAttrs: String) -> String {
        let hosts = servers.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
        return "postgresql://postgres@\(hosts)/\(database)?target_session_attrs=\(targetSessionAttrs)&connect_timeout=2"
    }
}
