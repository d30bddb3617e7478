import Foundation
import Programs

// Password files and certificates made by the tools operators use (Apache's htpasswd, openssl),
// never by the code under test.

/// Adds `user` with `password` to `file` (creating it) with Apache's `htpasswd -B -b`, so the
/// hashes under test are the ones operators really have.
public func htpasswd(_ file: URL, user: String, password: String, cost: Int = 5) throws {
    let create = FileManager.default.fileExists(atPath: file.path) ? [] : ["-c"]
    try Program.checkBlocking("/usr/bin/htpasswd", ["-B", "-C", String(cost), "-b"] + create + [file.path, user, password])
}

/// `Basic base64(user:password)`, encoded by Foundation.
public func basicHeader(_ user: String, _ password: String) -> String {
    "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
}

/// A test certificate authority and a server certificate it signed for 127.0.0.1 and
/// localhost, plus a second key that matches nothing: all PEM files made by `openssl`.
public struct TestCertificates {
    public let authority: URL
    public let certificate: URL
    public let key: URL
    public let strayKey: URL

    public init(in directory: URL) throws {
        authority = directory.appendingPathComponent("ca.pem")
        certificate = directory.appendingPathComponent("server.pem")
        key = directory.appendingPathComponent("server-key.pem")
        strayKey = directory.appendingPathComponent("stray-key.pem")
        let authorityKey = directory.appendingPathComponent("ca-key.pem")
        let request = directory.appendingPathComponent("server.csr")
        let extensions = directory.appendingPathComponent("server.ext")
        let openssl = "/usr/bin/openssl"
        try Program.checkBlocking(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                              "-keyout", authorityKey.path, "-out", authority.path, "-days", "2",
                              "-subj", "/CN=Counterpoint test CA"])
        try Program.checkBlocking(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                              "-keyout", key.path, "-out", request.path, "-subj", "/CN=127.0.0.1"])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
            .write(to: extensions, atomically: true, encoding: .utf8)
        try Program.checkBlocking(openssl, ["x509", "-req", "-in", request.path, "-CA", authority.path, "-CAkey", authorityKey.path,
                              "-CAcreateserial", "-out", certificate.path, "-days", "2", "-extfile", extensions.path])
        try Program.checkBlocking(openssl, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", strayKey.path])
    }
}
