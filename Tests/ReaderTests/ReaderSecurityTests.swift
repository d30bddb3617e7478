import Foundation
import HTTPServer
import HTTPTestClient
import LogCapture
import Logging
@testable import Reader
import Patience
import Runtime
import Scratch
import SecurityFixtures
import StoreTestSupport
import Testing

/// A reader with a password file (made by `htpasswd -B`) and the headers every answer carries.
@Suite("the reader's credentials and security headers", .onTestThreads)
struct ReaderSecurityTests {
    /// A request for every route the server has (`Route.templates`), with the parameters it needs.
    static let routeTargets: [(template: String, target: String)] = Route.table.map(\.template).map { template in
        var target = template.replacingOccurrences(of: "{id}", with: "1")
        if template == "/v1/plays" { target += "?track_id=1" }
        if template.hasSuffix("/{id}/breakdown") { target += "?by=country" }
        return (template, target)
    }

    static func withGuardedReader<T>(_ body: (ReaderFixture) throws -> T) throws -> T {
        try withTemporaryDirectory { scratch in
            let file = scratch.appendingPathComponent("htpasswd")
            try htpasswd(file, user: "dashboard", password: "s3cret: with a colon")
            try htpasswd(file, user: "grafana", password: "another one")
            return try ReaderFixture.with(.sqlite, configure: { $0.passwordFile = file.path }) { try body($0) }
        }
    }

    @Test("with a password file, every route but /healthz and /readyz answers 401 without credentials or with wrong ones, and 200 with right ones")
    func everyRouteNeedsCredentials() throws {
        #expect(Self.routeTargets.count == 22)
        try Self.withGuardedReader { reader in
            let right = ["Authorization: " + basicHeader("dashboard", "s3cret: with a colon")]
            let wrongOnes = [
                [], ["Authorization: " + basicHeader("dashboard", "s3cret")], ["Authorization: " + basicHeader("nobody", "s3cret: with a colon")],
                ["Authorization: Bearer abc"], ["Authorization: Basic !!"],
            ]
            for (template, target) in Self.routeTargets {
                let open = template == "/healthz" || template == "/readyz"
                for wrong in wrongOnes {
                    let refused = try reader.get(target, headers: wrong)
                    if open {
                        #expect(refused.status == 200, "\(template) is open to probes")
                        continue
                    }
                    #expect(refused.status == 401, "\(template) with \(wrong)")
                    #expect(refused.header("WWW-Authenticate") == #"Basic realm="counterpoint", charset="UTF-8""#)
                    #expect(refused.header("Content-Type") == "application/json; charset=utf-8")
                    #expect(refused.header("X-Content-Type-Options") == "nosniff")
                    let error = try refused.object()["error"] as? [String: Any]
                    #expect(error?["code"] as? String == "unauthorized")
                    #expect((error?["message"] as? String)?.isEmpty == false)
                }
                let granted = try reader.get(target, headers: right)
                #expect(granted.status == 200, "\(template): \(granted.text.prefix(200))")
                #expect(granted.header("WWW-Authenticate") == nil)
            }
            // Another user of the same file, and HEAD.
            let other = ["Authorization: " + basicHeader("grafana", "another one")]
            #expect(try reader.get("/v1/top", headers: other).status == 200)
            #expect(try reader.get("/v1/top", method: "HEAD", headers: other).status == 200)
            #expect(try reader.get("/v1/top", method: "HEAD").status == 401)
        }
    }

    @Test("without credentials not even a 404 or a 405 tells which routes exist")
    func unknownRoutesNeedCredentialsToo() throws {
        try Self.withGuardedReader { reader throws in
            let right = ["Authorization: " + basicHeader("dashboard", "s3cret: with a colon")]
            #expect(try reader.get("/v1/nothing-here").status == 401)
            #expect(try reader.get("/v1/nothing-here", headers: right).status == 404)
            #expect(try reader.get("/v1/top", method: "POST").status == 401)
            #expect(try reader.get("/v1/top", method: "POST", headers: right).status == 405)
            #expect(try reader.get("/healthz/").status == 401)
        }
    }

    @Test("every API answer, errors and metrics included, says nosniff; the page also forbids framing and referrers")
    func securityHeaders() throws {
        try ReaderFixture.with(.sqlite) { reader in
            for target in ["/v1/top", "/v1/tracks/0/plays", "/nope", "/metrics", "/healthz", "/v1/status", "/"] {
                let response = try reader.get(target)
                #expect(response.header("X-Content-Type-Options") == "nosniff", "\(target)")
            }
            let tooLong = try reader.get("/v1/top?" + String(repeating: "a", count: 9_000))
            #expect(tooLong.status == 414)
            #expect(tooLong.header("X-Content-Type-Options") == "nosniff")

            let page = try reader.get("/")
            #expect(page.header("X-Frame-Options") == "DENY")
            #expect(page.header("Referrer-Policy") == "no-referrer")
            let policy = page.header("Content-Security-Policy") ?? ""
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(policy.contains("default-src 'none'"))
            let revalidated = try reader.get("/", headers: ["If-None-Match: \(page.header("ETag") ?? "")"])
            #expect(revalidated.status == 304)
            #expect(revalidated.header("X-Frame-Options") == "DENY")
        }
    }

    @Test("one warning at start when listening beyond loopback without TLS or credentials, none on loopback")
    func exposureWarning() throws {
        func warnings(host: String, passwordFile: String?) throws -> [String] {
            let records = CapturingLogHandler.Records()
            let logger = CapturingLogHandler.logger("reader-security-tests", into: records)
            try ReaderFixture.with(.sqlite, configure: { $0.server.host = host; $0.passwordFile = passwordFile }, logger: logger) { _ in }
            return records.messages(at: .warning)
        }
        try withTemporaryDirectory { scratch in
            let file = scratch.appendingPathComponent("htpasswd")
            try htpasswd(file, user: "dashboard", password: "s3cret")

            let open = try warnings(host: "0.0.0.0", passwordFile: nil)
            #expect(open.count == 1, "\(open)")
            #expect(open.first?.contains("beyond loopback without TLS") == true)
            #expect(open.first?.contains("credentials") == true)

            let guarded = try warnings(host: "0.0.0.0", passwordFile: file.path)
            #expect(guarded.count == 1, "\(guarded)")
            #expect(guarded.first?.contains("TLS") == true)
            #expect(guarded.first?.contains("--htpasswd") == false)

            #expect(try warnings(host: "127.0.0.1", passwordFile: nil).isEmpty)
            #expect(try warnings(host: "::1", passwordFile: nil).isEmpty)
        }
    }

    @Test("a malformed password file stops the reader at start with an error naming its line")
    func malformedPasswordFile() throws {
        try withTemporaryDirectory { scratch in
            let file = scratch.appendingPathComponent("htpasswd")
            try htpasswd(file, user: "dashboard", password: "s3cret")
            let handle = try FileHandle(forWritingTo: file)
            handle.seekToEndOfFile()
            handle.write(Data("grafana:$apr1$4nl/PHRk$NSipdJrPlWPo6VQgrDzhw1\n".utf8))
            try handle.close()
            #expect {
                try ReaderFixture.with(.sqlite, configure: { $0.passwordFile = file.path }) { _ in }
            } throws: { error in
                "\(error)" == "password file \(file.path), line 2: user 'grafana' has no bcrypt hash ($2y$ or $2b$); make it with htpasswd -B"
            }
        }
    }
}
