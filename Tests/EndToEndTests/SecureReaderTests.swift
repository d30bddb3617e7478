import Foundation
import Programs
import Scratch
import SecurityFixtures
import Testing

extension EndToEnd {
    /// `serve --tls-cert/--tls-key/--htpasswd` against real clients: curl (OpenSSL) with a test CA
    /// that openssl made, and a password file that Apache's htpasswd made.
    @Suite("the reader over TLS and with credentials")
    struct SecureReader {
        /// What curl did: its exit status, the HTTP status it printed (0 when it got none) and its stderr.
        struct CurlOutcome {
            var exitStatus: Int32
            var httpStatus: Int
            var body: String
            var stderr: String
        }

        static func curl(_ arguments: [String], scratch: URL) throws -> CurlOutcome {
            let bodyFile = scratch.appendingPathComponent("curl-body-\(UUID().uuidString)")
            let outcome = try Program.runBlocking("/usr/bin/curl", ["--silent", "--show-error", "--max-time", "10", "--output", bodyFile.path,
                                                                    "--write-out", "%{http_code}"] + arguments)
            let body = (try? String(contentsOf: bodyFile, encoding: .utf8)) ?? ""
            return CurlOutcome(exitStatus: outcome.status, httpStatus: Int(outcome.text) ?? 0, body: body, stderr: outcome.errors)
        }

        @Test("with --tls-cert and --tls-key a TLS client that trusts the CA gets the right answers; plain HTTP, TLS 1.1 and untrusting clients get none")
        func httpsOnly() async throws {
            try await withTemporaryDirectory { scratch in
                let certificates = try TestCertificates(in: scratch)
                let passwords = scratch.appendingPathComponent("htpasswd")
                try htpasswd(passwords, user: "dashboard", password: "s3cret")
                let server = try await Server.start(
                    dataDirectory: scratch.appendingPathComponent("data"), scratch: scratch,
                    extraArguments: ["--tls-cert", certificates.certificate.path, "--tls-key", certificates.key.path,
                                     "--htpasswd", passwords.path])
                defer { server.command.signal(SIGKILL) }
                #expect(server.command.stdout.hasPrefix("counterpoint: reader listening on https://127.0.0.1:"))
                let base = "https://127.0.0.1:\(server.port)"
                let trusted = ["--cacert", certificates.authority.path]

                let top = try Self.curl(trusted + ["--user", "dashboard:s3cret", "\(base)/v1/top"], scratch: scratch)
                #expect(top.exitStatus == 0 && top.httpStatus == 200, "\(top)")
                let answer = try JSONSerialization.jsonObject(with: Data(top.body.utf8)) as? [String: Any]
                #expect((answer?["tracks"] as? [Any])?.isEmpty == true, "an empty store ranks nothing: \(top.body)")
                let plays = try Self.curl(trusted + ["--user", "dashboard:s3cret", "\(base)/v1/tracks/7/plays"], scratch: scratch)
                #expect(plays.httpStatus == 200 && plays.body.contains(#""plays":0"#), "\(plays)")
                #expect(try Self.curl(trusted + ["\(base)/v1/top"], scratch: scratch).httpStatus == 401)
                #expect(try Self.curl(trusted + ["--user", "dashboard:wrong", "\(base)/v1/top"], scratch: scratch).httpStatus == 401)
                #expect(try Self.curl(trusted + ["\(base)/healthz"], scratch: scratch).httpStatus == 200)
                for version in ["1.2", "1.3"] {
                    let pinned = try Self.curl(trusted + ["--tlsv\(version)", "--tls-max", version, "\(base)/readyz"], scratch: scratch)
                    #expect(pinned.httpStatus == 200, "TLS \(version): \(pinned)")
                }

                let plain = try Self.curl(["http://127.0.0.1:\(server.port)/healthz"], scratch: scratch)
                #expect(plain.exitStatus != 0 && plain.httpStatus == 0, "plain HTTP got an answer: \(plain)")
                // These options make curl's OpenSSL offer TLS 1.1 (it reaches `openssl s_server -tls1_1`), so
                // the refusal is the reader's.
                let old = try Self.curl(trusted + ["--tlsv1.1", "--tls-max", "1.1", "--ciphers", "DEFAULT@SECLEVEL=0",
                                                   "\(base)/healthz"], scratch: scratch)
                #expect(old.exitStatus == 35 && old.httpStatus == 0, "TLS 1.1 got through: \(old)")
                let untrusting = try Self.curl(["\(base)/healthz"], scratch: scratch)
                #expect(untrusting.exitStatus == 60 && untrusting.httpStatus == 0, "\(untrusting)")

                try await server.stop()
            }
        }

        @Test("an unreadable, non-PEM or mismatched TLS file, or half of the pair, stops serve at start with one line")
        func badTLSFilesFailAtStart() async throws {
            try await withTemporaryDirectory { scratch in
                let certificates = try TestCertificates(in: scratch)
                let missing = scratch.appendingPathComponent("missing.pem").path
                let cases: [(arguments: [String], mentions: String)] = [
                    (["--tls-cert", certificates.certificate.path, "--tls-key", missing], missing),
                    (["--tls-cert", missing, "--tls-key", certificates.key.path], missing),
                    (["--tls-cert", scratch.path, "--tls-key", certificates.key.path], scratch.path),
                    (["--tls-cert", certificates.key.path, "--tls-key", certificates.key.path], "no PEM certificate"),
                    (["--tls-cert", certificates.certificate.path, "--tls-key", certificates.certificate.path], "no PEM private key"),
                    (["--tls-cert", certificates.certificate.path, "--tls-key", certificates.strayKey.path], "do not match"),
                    (["--tls-cert", certificates.certificate.path], "--tls-cert and --tls-key go together"),
                ]
                for (arguments, mentions) in cases {
                    let result = try await runCounterpoint(
                        ["serve", "--data-dir", scratch.appendingPathComponent("data").path, "--listen", "127.0.0.1:0"] + arguments,
                        scratch: scratch, timeout: .seconds(60))
                    #expect(result.exited && result.status != 0, "\(result.summary)")
                    #expect(result.stdout.isEmpty, "nothing announced: \(result.summary)")
                    #expect(result.stderrMessages.count == 1, "one line: \(result.summary)")
                    #expect(result.stderrMessages.first?.contains(mentions) == true, "\(mentions): \(result.summary)")
                    #expect(!result.stderr.contains("BEGIN"), "no key material shown")
                }
            }
        }

        @Test("a malformed line in the password file stops serve at start with one line naming the file and the line")
        func malformedPasswordFile() async throws {
            try await withTemporaryDirectory { scratch in
                let passwords = scratch.appendingPathComponent("htpasswd")
                try htpasswd(passwords, user: "dashboard", password: "s3cret")
                try htpasswd(passwords, user: "grafana", password: "other")
                let text = try String(contentsOf: passwords, encoding: .utf8)
                try (text + "prometheus\n").write(to: passwords, atomically: true, encoding: .utf8)
                let result = try await runCounterpoint(
                    ["serve", "--data-dir", scratch.appendingPathComponent("data").path, "--listen", "127.0.0.1:0",
                     "--htpasswd", passwords.path], scratch: scratch, timeout: .seconds(60))
                #expect(result.exited && result.status != 0, "\(result.summary)")
                #expect(result.stderrMessages.count == 1, "\(result.summary)")
                #expect(result.stderrMessages.first?.contains("password file \(passwords.path), line 3:") == true, "\(result.summary)")
                #expect(!result.stderr.contains("$2y$"), "no hash shown")
            }
        }

        @Test("serve warns once in its log when it listens beyond loopback without TLS or credentials, and not on loopback")
        func exposureWarning() async throws {
            try await withTemporaryDirectory { scratch in
                let data = scratch.appendingPathComponent("data")
                func warnings(_ server: Server) -> [String] {
                    server.command.stderr.split(separator: "\n").map(String.init)
                        .filter { RunningProgram.isLogLine($0) && $0.contains(" warning ") }
                }
                let exposed = try await Server.start(dataDirectory: data, scratch: scratch, listen: "0.0.0.0:0")
                let exposedWarnings = warnings(exposed)
                try await exposed.stop()
                #expect(exposedWarnings.count == 1, "\(exposedWarnings)")
                #expect(exposedWarnings.first?.contains("beyond loopback without TLS") == true, "\(exposedWarnings)")
                #expect(exposedWarnings.first?.contains("credentials") == true, "\(exposedWarnings)")

                let local = try await Server.start(dataDirectory: data, scratch: scratch)
                let localWarnings = warnings(local)
                try await local.stop()
                #expect(localWarnings.isEmpty, "\(localWarnings)")
            }
        }
    }
}
