/// A certificate (chain) and its private key, both PEM, for a server that answers HTTPS only.
/// Its description never shows the key.
public struct TLSCredentials: Sendable, CustomStringConvertible {
    /// The server's certificate, then any intermediates, PEM.
    public var certificatePEM: [UInt8]
    /// The certificate's private key, PEM, unencrypted.
    public var keyPEM: [UInt8]

    public init(certificatePEM: [UInt8], keyPEM: [UInt8]) {
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
    }

    public var description: String {
        "TLSCredentials(certificate: \(certificatePEM.count) bytes, key: hidden)"
    }

    /// GnuTLS's priority string: its usual ciphers, and no protocol older than TLS 1.2.
    static let priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
}

/// The PEM texts and priority string as NUL-terminated C strings that outlive the daemon:
/// libmicrohttpd keeps the pointers it was given. Zeroed before they are freed.
final class TLSMaterial: @unchecked Sendable {
    // @unchecked: written once in init, then only read by libmicrohttpd until deinit.
    let certificate: UnsafeMutablePointer<CChar>
    let key: UnsafeMutablePointer<CChar>
    let priorities: UnsafeMutablePointer<CChar>

    init(_ credentials: TLSCredentials) {
        certificate = Self.cString(credentials.certificatePEM)
        key = Self.cString(credentials.keyPEM)
        priorities = Self.cString(Array(TLSCredentials.priorities.utf8))
    }

    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar> {
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        bytes.withUnsafeBytes { source in
            if let start = source.baseAddress { UnsafeMutableRawPointer(copy).copyMemory(from: start, byteCount: source.count) }
        }
        copy[bytes.count] = 0
        return copy
    }

    deinit {
        for pointer in [certificate, key, priorities] {
            var index = 0
            while pointer[index] != 0 { pointer[index] = 0; index += 1 }
            pointer.deallocate()
        }
    }
}
