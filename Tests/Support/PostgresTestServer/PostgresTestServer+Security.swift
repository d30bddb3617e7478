import Foundation
import PostgresDB
import Runtime

/// What a client needs to check the server's certificate.
public struct TestCertificates: Sendable {
    /// The test CA that signed the server's certificate (for `sslrootcert`).
    public var authority: String
    /// Another CA, which did not: verifying against it must fail.
    public var unrelatedAuthority: String
}

extension PostgresTestServer {
    /// Turns TLS on (`ssl = on`, reloaded without a restart) with a certificate for `localhost`
    /// and 127.0.0.1 signed by a test CA that `openssl` makes now. Plain connections keep
    /// working. Meant for a server of its own (`startPrivate()`): with TLS on, libpq's default
    /// `sslmode=prefer` encrypts every connection.
    public func enableTLS() throws -> TestCertificates {
        let tls = directory + "/tls"
        try FileManager.default.createDirectory(atPath: tls, withIntermediateDirectories: true)
        let openssl = "/usr/bin/openssl"
        for name in ["ca", "other-ca"] {
            try Self.run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Counterpoint test \(name)",
                                   "-keyout", "\(tls)/\(name).key", "-out", "\(tls)/\(name).pem"], what: "openssl: make \(name)")
        }
        try Self.run(openssl, ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                               "-keyout", "\(tls)/server.key", "-out", "\(tls)/server.csr"], what: "openssl: server key")
        try "subjectAltName = DNS:localhost, IP:127.0.0.1\n".write(toFile: "\(tls)/san.ext", atomically: true, encoding: .utf8)
        try Self.run(openssl, ["x509", "-req", "-in", "\(tls)/server.csr", "-CA", "\(tls)/ca.pem", "-CAkey", "\(tls)/ca.key",
                               "-CAcreateserial", "-days", "2", "-extfile", "\(tls)/san.ext", "-out", "\(tls)/server.pem"],
                     what: "openssl: sign the server certificate")
        // The server refuses a key that others can read, and must own it.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: "\(tls)/server.key")
        if let runAs {
            try Self.run("/bin/chown", ["-R", runAs, tls], what: "chown the certificates to \(runAs)")
        }
        try configure([
            "ALTER SYSTEM SET ssl_cert_file = '\(tls)/server.pem'",
            "ALTER SYSTEM SET ssl_key_file = '\(tls)/server.key'",
            "ALTER SYSTEM SET ssl = on",
        ]) {
            let probe = try? PostgresConnection(url: url(database: "postgres") + "?sslmode=disable")
            return (try? probe?.query("SHOW ssl").string(row: 0, column: 0)) == "on"
        }
        return TestCertificates(authority: "\(tls)/ca.pem", unrelatedAuthority: "\(tls)/other-ca.pem")
    }

    /// Adds a login role that must authenticate with `password` (SCRAM-SHA-256) on TCP
    /// connections, where every other role keeps trust authentication.
    public func addPasswordRole(_ role: String, password: String) throws {
        let hba = directory + "/data/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        // The first matching line decides: this one goes before the trust lines.
        try ("host all \(role) 127.0.0.1/32 scram-sha-256\nhost all \(role) ::1/128 scram-sha-256\n" + rules)
            .write(toFile: hba, atomically: false, encoding: .utf8)
        let quoted = password.replacingOccurrences(of: "'", with: "''")
        try configure([
            "SET password_encryption = 'scram-sha-256'",
            "CREATE ROLE \(role) LOGIN SUPERUSER PASSWORD '\(quoted)'",
        ]) {
            // Loaded once the role is refused without its password.
            (try? PostgresConnection(url: "postgresql://\(role)@127.0.0.1:\(port)/postgres?sslmode=disable")) == nil
        }
    }

    /// Runs `statements` as the superuser, reloads the configuration, and waits until a new
    /// connection sees it (`loaded` says so; the reload is asynchronous).
    private func configure(_ statements: [String], loaded: () -> Bool) throws {
        let admin = try PostgresConnection(url: url(database: "postgres") + "?sslmode=disable")
        for statement in statements { try admin.execute(statement) }
        try admin.execute("SELECT pg_reload_conf()")
        for _ in 0..<200 {
            if loaded() { return }
            BlockingThread.sleep(for: .milliseconds(50))
        }
        throw TestServerError(message: "the server did not load its new configuration")
    }
}
