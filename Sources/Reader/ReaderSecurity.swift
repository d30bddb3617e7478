import Credentials
import HTTPServer
import Logging

/// The files that make the reader HTTPS-only: a certificate (chain) and its private key, PEM.
public struct TLSFiles: Sendable, Equatable {
    public var certificateFile: String
    public var keyFile: String

    public init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    /// Both files, read now. A file that cannot be read or holds no PEM of the right kind is an
    /// error naming it; whether the key matches the certificate, GnuTLS checks when the server starts.
    func load() throws -> TLSCredentials {
        let certificate = try SecretFile.read(certificateFile, what: "the TLS certificate")
        let key = try SecretFile.read(keyFile, what: "the TLS key")
        guard contains(certificate, "-----BEGIN CERTIFICATE-----") else {
            throw ReaderSecurityError("the TLS certificate \(certificateFile) holds no PEM certificate")
        }
        guard contains(key, "PRIVATE KEY-----") else {
            throw ReaderSecurityError("the TLS key \(keyFile) holds no PEM private key")
        }
        return TLSCredentials(certificatePEM: certificate, keyPEM: key)
    }

    private func contains(_ bytes: [UInt8], _ marker: String) -> Bool {
        let needle = Array(marker.utf8)
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { start in bytes[start..<(start + needle.count)].elementsEqual(needle) }
    }
}

/// A TLS file that is not what it should be; one line, naming the file.
public struct ReaderSecurityError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Who may read: HTTP Basic on every route but the probes, when a password file is configured.
enum ReaderAccess {
    /// The answer to a request without acceptable credentials, or nil to let it through.
    static func refusal(of request: HTTPRequest, route: Route?, authenticator: BasicAuthenticator?) -> APIError? {
        guard let authenticator, route?.needsCredentials ?? true else { return nil }
        switch authenticator.verdict(authorization: request.header("Authorization")) {
        case .granted:
            return nil
        case .denied:
            return .unauthorized
        case .busy:
            return .credentialsBusy
        }
    }

    /// One warning when the reader can be reached from other machines in the clear or by anyone.
    static func warnIfExposed(host: String, port: Int, isLoopbackOnly: Bool, usesTLS: Bool, requiresCredentials: Bool,
                              logger: Logger) {
        guard !isLoopbackOnly else { return }
        let missing = (usesTLS ? [] : ["TLS (--tls-cert, --tls-key)"]) + (requiresCredentials ? [] : ["credentials (--htpasswd)"])
        guard !missing.isEmpty else { return }
        logger.warning("the reader listens beyond loopback without \(missing.joined(separator: " and ")); see docs/runbook.md, Secure it", metadata: [
            "http.host": "\(host)", "http.port": "\(port)",
        ])
    }
}

extension APIError {
    static let unauthorized = APIError(
        status: 401, code: "unauthorized", message: "this reader requires HTTP Basic credentials (user and password)")
    static let credentialsBusy = APIError(
        status: 503, code: "credentials_busy", message: "too many password checks are running; try again in a moment")
}
