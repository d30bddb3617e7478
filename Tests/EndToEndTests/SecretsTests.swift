import Foundation
import Programs
import Scratch
import SecurityFixtures
import Testing

extension RunEndToEnd {
    /// Secrets given to the program never come back out of it (docs/runbook.md, "Secure it").
    @Suite("Secrets never shown")
    struct SecretsTests {
        static let kafkaFlagSecret = "kafkaFlagSecret4Wz"
        static let kafkaFileSecret = "kafkaFileSecret8Qp"
        static let kafkaKeySecret = "kafkaKeySecret2Lm"
        static let environmentSecret = "environmentSecret5Tc"
        static let httpPassword = "httpPassword7Kd"

        static func kafkaConfig(in scratch: URL) throws -> String {
            let path = scratch.appendingPathComponent("kafka.conf").path
            try """
            # what a secured cluster needs, secrets included
            sasl.username=counterpoint
            sasl.oauthbearer.config=principal=counterpoint extension_token=\(kafkaFileSecret)
            ssl.key.password=\(kafkaKeySecret)
            """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        @Test("a run given Kafka secrets and a store password shows none of them in its log, status, metrics, page or one-line errors")
        func runShowsNoSecret() async throws {
            let setup = try SecuredPostgres.shared()
            try await withTemporaryDirectory { scratch in
                let store = try setup.database("sslmode=verify-full&sslrootcert=\(setup.certificates.authority)",
                                               password: SecuredPostgres.password).url
                let passwords = scratch.appendingPathComponent("htpasswd")
                try htpasswd(passwords, user: "dashboard", password: Self.httpPassword)
                let hash = try String(contentsOf: passwords, encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":", maxSplits: 1)[1]
                let secrets = [SecuredPostgres.password, Self.kafkaFlagSecret, Self.kafkaFileSecret, Self.kafkaKeySecret,
                               Self.httpPassword, String(hash), basicHeader("dashboard", Self.httpPassword)]
                let run = try Executable.start([
                    "run", "--store", store, "--data-dir", scratch.appendingPathComponent("data").path,
                    "--listen", "127.0.0.1:0", "--partitions", "2", "--demo", "--demo-events", "2000", "--demo-rate", "200",
                    "--log-level", "debug", "--kafka-config", try Self.kafkaConfig(in: scratch),
                    "--kafka-option", "sasl.password=\(Self.kafkaFlagSecret)", "--kafka-option", "debug=conf,security",
                    "--htpasswd", passwords.path,
                ], scratch: scratch)
                var collected: [String] = []
                do {
                    let (_, port) = try await RunMergeTests.addresses(of: run)
                    let server = Server(command: run, port: port)
                    // The reader answers from the start; everything else once run has prepared.
                    try await Drill.waitUntil(timeout: .seconds(60)) { try server.request("/readyz").status == 200 }
                    try await Task.sleep(for: .seconds(2))
                    for target in ["/v1/status", "/metrics", "/", "/readyz", "/healthz", "/v1/top"] {
                        let response = try server.request(
                            target, headers: ["Authorization: " + basicHeader("dashboard", Self.httpPassword)])
                        #expect(response.status == 200, "\(target) → \(response.status)")
                        collected.append(response.text)
                    }
                    // The status does show the layers, so the page collected is the real one.
                    #expect(collected[0].contains("\"realtime\""))
                    try await server.stop(timeout: .seconds(15))
                } catch {
                    await run.killIfRunning()
                    throw error
                }
                collected += [run.stdout, run.stderr]
                // librdkafka's configuration dump was logged, so its lines were there to leak.
                #expect(run.stderr.contains("sasl.username"), "\(run.stderr.suffix(2_000))")
                for secret in secrets {
                    #expect(!collected.contains { $0.contains(secret) }, "\(secret) was shown")
                }
            }
        }

        @Test("--help shows no secret, even when the environment holds one")
        func helpShowsNoSecret() async throws {
            try await withTemporaryDirectory { scratch in
                let environment = [
                    "COUNTERPOINT_STORE": "postgresql://counter:\(Self.environmentSecret)@db.example/counts",
                    "COUNTERPOINT_KAFKA_OPTION": "sasl.password=\(Self.environmentSecret)",
                    "COUNTERPOINT_KAFKA_CONFIG": try Self.kafkaConfig(in: scratch),
                ]
                for command in ["run", "consume", "archive", "replay", "serve", "batch", "copy-store"] {
                    let result = try await runCounterpoint([command, "--help"], scratch: scratch, environment: environment)
                    #expect(result.status == 0)
                    #expect(!(result.stdout + result.stderr).contains(Self.environmentSecret), "\(command) --help")
                    #expect(!(result.stdout + result.stderr).contains(Self.kafkaFileSecret), "\(command) --help")
                }
            }
        }

        @Test("one-line errors show no secret: a refused Kafka option, a bad option line, an unreachable database")
        func errorsShowNoSecret() async throws {
            try await withTemporaryDirectory { scratch in
                let attempts: [[String]] = [
                    ["consume", "--brokers", "127.0.0.1:1", "--kafka-option", "no.such.password=\(Self.kafkaFlagSecret)"],
                    ["replay", "--brokers", "127.0.0.1:1", "--logs", scratch.path, "--kafka-option", "sasl.password:\(Self.kafkaFlagSecret)"],
                    ["serve", "--store", "postgresql://counter:\(Self.kafkaFlagSecret)@127.0.0.1:1/counts?connect_timeout=2",
                     "--listen", "127.0.0.1:0"],
                    ["serve", "--store", "mysql://counter:\(Self.kafkaFlagSecret)@127.0.0.1/counts", "--listen", "127.0.0.1:0"],
                ]
                for arguments in attempts {
                    let result = try await runCounterpoint(arguments, scratch: scratch)
                    #expect(result.status != 0, "\(result.summary)")
                    #expect(result.stderrMessages.count == 1, "\(result.summary)")
                    #expect(!(result.stdout + result.stderr).contains(Self.kafkaFlagSecret), "\(result.summary)")
                }
            }
        }
    }
}
