import Foundation
import PostgresDB
import PostgresTestServer
import Patience
import Programs
import Scratch
import Testing

/// A PostgreSQL server of its own with TLS on (a test CA made by openssl) and a role that must
/// log in with a password, shared by the tests of this file and `SecretsTests`.
enum SecuredPostgres {
    static let role = "counter"
    /// Letters and digits only, so that it reads the same inside a URI and out.
    static let password = "pgSecret7Hx2Qv9"

    struct Setup: Sendable {
        let server: PostgresTestServer
        let certificates: TestCertificates
    }

    private static let setup = Result { try start() }

    private static func start() throws -> Setup {
        let server = try PostgresTestServer.startPrivate()
        atexit { SecuredPostgres.stop() }
        let certificates = try server.enableTLS()
        try server.addPasswordRole(role, password: password)
        return Setup(server: server, certificates: certificates)
    }

    private static func stop() {
        if case let .success(setup) = setup { setup.server.stop() }
    }

    static func shared() throws -> Setup { try setup.get() }
}

extension SecuredPostgres.Setup {
    /// A new database, named in a URI for `localhost` (the name the certificate holds) as
    /// `SecuredPostgres.role`, with `password` in it if one is given, plus `parameters`.
    func database(_ parameters: String, password: String? = nil) throws -> (name: String, url: String) {
        let url = try server.makeDatabase()
        let name = PostgresTestServer.databaseName(of: url)
        let user = SecuredPostgres.role + (password.map { ":" + $0 } ?? "")
        return (name, "postgresql://\(user)@localhost:\(server.port)/\(name)?\(parameters)")
    }

    /// A password file (mode 0600, as libpq requires) holding the role's password.
    func passwordFile(in scratch: URL) throws -> String {
        let path = scratch.appendingPathComponent("pgpass").path
        try "localhost:\(server.port):*:\(SecuredPostgres.role):\(SecuredPostgres.password)\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }
}

extension EndToEnd {
    @Suite("PostgreSQL through every libpq parameter: TLS, password files, the libpq environment")
    struct SecureStoreTests {
        @Test("sslmode=verify-full with the right CA and the password from PGPASSFILE: batch writes and serve answers")
        func verifiedTLSAndPasswordFile() async throws {
            let setup = try SecuredPostgres.shared()
            try await withTemporaryDirectory { scratch in
                let ca = setup.certificates.authority
                let store = try setup.database("sslmode=verify-full&sslrootcert=\(ca)").url
                let passwords = try setup.passwordFile(in: scratch)
                let logs = scratch.appendingPathComponent("logs")
                try await Steps.generate(into: logs, scratch: scratch, events: 2_000, tracks: 20, seed: 19)
                let exact = try LogTruth(logs: logs)

                // Without the password file the server refuses the role: the password really comes from it.
                let refused = try await runCounterpoint(["serve", "--store", store, "--listen", "127.0.0.1:0"], scratch: scratch)
                #expect(refused.status != 0)
                #expect(refused.stderrMessages.count == 1 && refused.stderrMessages[0].contains("no password supplied"),
                        "\(refused.summary)")

                let environment = ["PGPASSFILE": passwords]
                let batch = try await runCounterpoint(["batch", "--store", store, "--logs", logs.path, "--all", "--json",
                                                       "--data-dir", scratch.appendingPathComponent("data").path],
                                                      scratch: scratch, environment: environment)
                #expect(batch.status == 0, "\(batch.summary)")
                let serve = try Executable.start(["serve", "--store", store, "--listen", "127.0.0.1:0"], scratch: scratch,
                                               environment: environment)
                let server = try await Self.started(serve)
                let track = exact.trackIDs.first!
                let answer = try server.json("/v1/tracks/\(track)/plays")
                #expect(int(answer["plays"]) == exact.plays(of: track))
                // Encrypted: the server lists the reader's connection as one over TLS.
                let admin = try PostgresConnection(url: setup.server.url(database: "postgres") + "?sslmode=disable")
                let encrypted = try admin.query("""
                    SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE usename = $1 AND ssl
                    """, [SecuredPostgres.role]).int64(row: 0, column: 0)
                #expect(encrypted > 0)
                try await server.stop()
            }
        }

        @Test("a CA that did not sign the server's certificate fails with one line that shows no password")
        func wrongAuthority() async throws {
            let setup = try SecuredPostgres.shared()
            try await withTemporaryDirectory { scratch in
                let parameters = "sslmode=verify-full&sslrootcert=\(setup.certificates.unrelatedAuthority)"
                for store in [try setup.database(parameters, password: SecuredPostgres.password).url,
                              try setup.database(parameters + "&password=\(SecuredPostgres.password)").url] {
                    let result = try await runCounterpoint(["serve", "--store", store, "--listen", "127.0.0.1:0"], scratch: scratch)
                    #expect(result.status != 0)
                    #expect(result.stderrMessages.count == 1, "\(result.summary)")
                    #expect(result.stderrMessages.first?.contains("certificate verify failed") == true, "\(result.summary)")
                    #expect(!(result.stdout + result.stderr).contains(SecuredPostgres.password), "\(result.summary)")
                }
            }
        }

        @Test("a wrong password in the URI fails with one line that shows neither it nor the right one")
        func wrongPassword() async throws {
            let setup = try SecuredPostgres.shared()
            try await withTemporaryDirectory { scratch in
                let wrong = "wrongPw3Kd8"
                let store = try setup.database("sslmode=require", password: wrong).url
                let result = try await runCounterpoint(["consume", "--store", store, "--brokers", "127.0.0.1:1"], scratch: scratch)
                #expect(result.status != 0)
                #expect(result.stderrMessages.count == 1, "\(result.summary)")
                #expect(result.stderrMessages.first?.contains("password authentication failed") == true, "\(result.summary)")
                #expect(!(result.stdout + result.stderr).contains(wrong), "\(result.summary)")
            }
        }

        @Test("batch, serve and consume given a store they cannot reach at start — stopped, no such database, a wrong password, a certificate from another CA — exit at once with one line and no password")
        func unreachableStoreAtStartEndsEveryCommand() async throws {
            let setup = try SecuredPostgres.shared()
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                try await Steps.generate(into: logs, scratch: scratch, events: 200, tracks: 5, seed: 44)
                let password = SecuredPostgres.password
                let (name, _) = try setup.database("")
                let stopped = try PostgresTestServer.freePort()   // nothing listens there
                let stores: [(String, String, String)] = [
                    ("stopped", "postgresql://\(SecuredPostgres.role):\(password)@127.0.0.1:\(stopped)/\(name)", "Connection refused"),
                    ("no such database", "postgresql://\(SecuredPostgres.role):\(password)@localhost:\(setup.server.port)/no_such_db?sslmode=require",
                     "does not exist"),
                    ("wrong password", try setup.database("sslmode=require", password: "wrongPw5Zq1").url, "password authentication failed"),
                    ("another CA", try setup.database("sslmode=verify-full&sslrootcert=\(setup.certificates.unrelatedAuthority)",
                                                       password: password).url, "certificate verify failed"),
                ]
                let commands: [[String]] = [
                    ["batch", "--logs", logs.path, "--all", "--data-dir", scratch.appendingPathComponent("data").path],
                    ["serve", "--listen", "127.0.0.1:0"],
                    ["consume", "--brokers", "127.0.0.1:1"],
                ]
                for (what, store, cause) in stores {
                    for command in commands {
                        // Still running after 30 s fails the test: it used to retry a connection it never had.
                        let result = try await runCounterpoint(command + ["--store", store], scratch: scratch, timeout: .seconds(30))
                        let label = "\(command[0]) with \(what): \(result.summary)"
                        #expect(result.status == 1, "\(label)")
                        #expect(result.stderrMessages.count == 1 && result.stderrMessages[0].contains(cause), "\(label)")
                        #expect(!(result.stdout + result.stderr).contains(password) && !(result.stdout + result.stderr).contains("wrongPw5Zq1"),
                                "\(label)")
                        if command[0] == "batch" {
                            #expect(result.stderrMessages.first?.contains("not retried: this run never reached it") == true, "\(label)")
                        }
                    }
                }
            }
        }

        @Test("the libpq environment and a socket directory as host= fill in what the URI leaves out")
        func libpqEnvironmentAndSocket() async throws {
            let setup = try SecuredPostgres.shared()
            try await withTemporaryDirectory { scratch in
                let name = try setup.database("").name
                let port = String(setup.server.port)
                // Everything from the environment, over the server's Unix socket.
                let fromEnvironment = try Executable.start(
                    ["serve", "--store", "postgresql:///\(name)", "--listen", "127.0.0.1:0"], scratch: scratch,
                    environment: ["PGHOST": setup.server.directory, "PGPORT": port, "PGUSER": "postgres"])
                let first = try await Self.started(fromEnvironment)
                #expect(try int(first.json("/v1/tracks/1/plays")["plays"]) == 0)
                try await first.stop()
                // Several hosts, the first with nothing listening (target_session_attrs picks a
                // writable one); and a socket directory as host=.
                for store in ["postgresql://postgres@127.0.0.1:1,localhost:\(port)/\(name)?target_session_attrs=read-write&connect_timeout=5",
                              "postgresql:///\(name)?host=\(setup.server.directory)&port=\(port)&user=postgres"] {
                    let server = try await Self.started(try Executable.start(["serve", "--store", store, "--listen", "127.0.0.1:0"],
                                                                           scratch: scratch))
                    #expect(try int(server.json("/v1/tracks/1/plays")["plays"]) == 0, "\(store)")
                    try await server.stop()
                }
            }
        }

        @Test("a URI libpq cannot read is refused at start with libpq's message, password hidden")
        func unreadableURI() async throws {
            try await withTemporaryDirectory { scratch in
                let result = try await runCounterpoint(
                    ["serve", "--store", "postgresql://u:pw%zzSecret@localhost/db?nonsense=1", "--listen", "127.0.0.1:0"],
                    scratch: scratch)
                #expect(result.status != 0)
                #expect(result.stderrMessages.count == 1, "\(result.summary)")
                #expect(!(result.stdout + result.stderr).contains("zzSecret"), "\(result.summary)")
            }
        }

        /// Waits for the line announcing the reader's port (`serve` and `run` print it).
        static func started(_ command: RunningProgram) async throws -> Server {
            let announcement = /reader listening on http:\/\/127\.0\.0\.1:([0-9]+)\//
            let started = try await eventually(within: .seconds(30)) {
                command.stdout.contains(announcement) || !command.isRunning
            }
            if started, let port = command.stdout.firstMatch(of: announcement)?.1 { return Server(command: command, port: Int(port)!) }
            await command.killIfRunning()
            throw CommandError(description: "no reader started: \(command.stdout) \(command.stderr.suffix(2_000))")
        }
    }
}
