import Foundation
import PostgresDB
import Programs
import Runtime

/// A real PostgreSQL server for the tests: Debian's `postgresql` binaries, a cluster created
/// by `initdb` in a temporary directory, listening on a free loopback port with trust
/// authentication, stopped and removed when the test process exits. One per test process
/// (`shared()`); each test takes a fresh database from it (`makeDatabase()`).
///
/// The server refuses to run as root, so when the tests run as root the cluster belongs to
/// the `postgres` system user (created by the Debian package) and every server command runs
/// through `runuser -u postgres --`. If the server cannot start, `shared()` throws a message
/// saying why — the tests fail, they are never skipped.
public final class PostgresTestServer: Sendable {
    public let port: Int
    public let directory: String
    let binaries: String
    let runAs: String?
    /// Extra `-c name=value` settings this server starts with (see `PostgresTestServer+Standby.swift`).
    let settings: [String]
    /// Whether `makeDatabase()` hands out databases made ahead (the shared server's).
    private let keepsSpares: Bool
    /// Databases made ahead, on a thread of their own: `CREATE DATABASE` writes and syncs a copy
    /// of the template (0.2 s on a quiet machine, more under the full run), which a test would
    /// otherwise wait for while holding one of the cooperative pool's two threads.
    private let spares = Locked(Spares())
    private struct Spares {
        var ready: [String] = []
        var making = false
    }
    private static let spareCount = 4

    private static let started = Locked<Result<PostgresTestServer, any Error>?>(nil)

    /// The server of this test process, started on first use.
    public static func shared() throws -> PostgresTestServer {
        try started.withLock { started in
            if started == nil {
                started = Result { try PostgresTestServer(keepsSpares: true) }
                if case .success = started { atexit { PostgresTestServer.stopShared() } }
            }
            return try started!.get()
        }
    }

    private static func stopShared() {
        if case let .success(server)? = started.withLock({ $0 }) { server.stop() }
    }

    /// A server of its own, for a test that restarts or stops it; `stop()` it when done.
    /// `settings` are extra `-c` settings, e.g. `["log_statement=all"]`.
    public static func startPrivate(settings: [String] = []) throws -> PostgresTestServer {
        try PostgresTestServer(settings: settings)
    }

    private init(settings: [String] = [], keepsSpares: Bool = false) throws {
        self.keepsSpares = keepsSpares
        binaries = try Self.findBinaries()
        runAs = getuid() == 0 ? "postgres" : nil
        self.settings = settings
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("counterpoint-pg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if let runAs {
            try Self.run("/bin/chown", [runAs, directory], what: "chown the server directory to \(runAs)")
        }
        try Self.run(binaries + "/initdb", ["-D", directory + "/data", "-A", "trust", "-U", "postgres", "-E", "UTF8",
                                            "--no-sync", "--no-instructions"], runAs: runAs, what: "initdb")
        port = try Self.freePort()
        try start()
    }

    /// A server over a data directory that already exists (a base backup), not yet started.
    init(copyIn directory: String, port: Int, binaries: String, runAs: String?, settings: [String]) {
        self.directory = directory
        self.port = port
        self.binaries = binaries
        self.runAs = runAs
        self.settings = settings
        keepsSpares = false
    }

    /// The URI of `database` on this server.
    public func url(database: String) -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    /// A new, empty database; returns its URI.
    public func makeDatabase() throws -> String {
        guard keepsSpares else { return url(database: try createDatabase()) }
        let spare = spares.withLock { $0.ready.popLast() }
        makeSpares()
        return url(database: try spare ?? createDatabase())
    }

    private func createDatabase() throws -> String {
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try PostgresConnection(url: url(database: "postgres"))
        try admin.execute("CREATE DATABASE \(name)")
        return name
    }

    /// Tops the spare databases up to `spareCount` on a thread of its own, unless one is at it.
    private func makeSpares() {
        let start = spares.withLock { spares -> Bool in
            guard !spares.making, spares.ready.count < Self.spareCount else { return false }
            spares.making = true
            return true
        }
        guard start else { return }
        _ = BlockingThread(name: "pg-spares") { [self] in
            var more = true
            while more {
                let name = try? createDatabase()
                more = spares.withLock { spares in
                    if let name { spares.ready.append(name) }
                    spares.making = name != nil && spares.ready.count < Self.spareCount
                    return spares.making
                }
            }
        }
    }

    /// The database named in a URI made by `url(database:)` or `makeDatabase()`.
    public static func databaseName(of url: String) -> String {
        String(url.split(separator: "/").last ?? "")
    }

    /// Drops the database of `url` (made by `makeDatabase()`), closing its connections; best effort.
    public func dropDatabase(url: String) {
        let name = Self.databaseName(of: url)
        guard !name.isEmpty else { return }
        _ = try? PostgresConnection(url: self.url(database: "postgres")).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// `pg_ctl restart -m fast`: every connection is closed by the server, as in a real restart.
    public func restart() throws {
        try Self.run(binaries + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "-m", "fast",
                                            "-o", serverOptions, "restart"], runAs: runAs, what: "pg_ctl restart")
    }

    /// `pg_ctl stop -m fast`: the server closes every connection and shuts down cleanly, as in
    /// the first half of a restart; `start()` brings it back.
    public func stopFast() throws {
        try Self.run(binaries + "/pg_ctl", ["-D", directory + "/data", "-w", "-m", "fast", "stop"],
                     runAs: runAs, what: "pg_ctl stop -m fast")
    }

    private var serverOptions: String {
        // fsync stays on: the benchmarks compare a durable PostgreSQL with SQLite in WAL mode.
        "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(directory) -c max_connections=200"
            + settings.map { " -c \($0)" }.joined()
    }

    public func start() throws {
        do {
            try Self.run(binaries + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "60",
                                                "-o", serverOptions, "start"], runAs: runAs, what: "pg_ctl start")
        } catch {
            let log = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
            throw TestServerError(message: "\(error); server log: \(log.suffix(2_000))")
        }
    }

    /// Stops the server and removes its directory.
    public func stop() {
        _ = try? Self.run(binaries + "/pg_ctl", ["-D", directory + "/data", "-w", "-m", "immediate", "stop"], runAs: runAs, what: "pg_ctl stop")
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Helpers

    static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        throw TestServerError(message: "no PostgreSQL server binaries under \(root)/*/bin; run ./scripts/setup (it installs postgresql)")
    }

    /// A loopback TCP port nothing listens on (as of this call).
    public static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestServerError(message: "socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, length) == 0 && getsockname(socket, generic, &length) == 0
            }
        }
        guard bound else { throw TestServerError(message: "cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs one of PostgreSQL's tools to its end (as `runAs`); its output, or an error saying `what` failed.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], runAs: String? = nil, what: String) throws -> String {
        let outcome = try Program.runBlocking(executable, arguments, mergingErrors: true, runAs: runAs)
        guard outcome.status == 0 else {
            throw TestServerError(message: "\(what) failed (status \(outcome.status)): \(outcome.text.suffix(2_000))")
        }
        return outcome.text
    }
}

public struct TestServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "PostgreSQL test server: \(message)" }
}
