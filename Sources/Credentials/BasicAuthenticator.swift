import Runtime

/// Checks HTTP Basic credentials (RFC 7617) against a `PasswordFile`.
///
/// bcrypt is slow on purpose (a few milliseconds at `htpasswd -B`'s cost 5, a quarter of a
/// second at cost 12), so:
/// - a credential that verified once is remembered, per user, as the SHA-256 of a per-process
///   secret, the user and the password; the next request with it costs one SHA-256 and a
///   constant-time comparison, not a bcrypt;
/// - at most `concurrentHashing` bcrypt computations run at once, and a request that finds them
///   all busy is answered `.busy` at once instead of waiting: a flood of wrong passwords can
///   occupy that many server threads and no more, and never delays a remembered credential;
/// - an unknown user costs a bcrypt as well (against a hash made at start), so the time of an
///   answer does not tell which users exist.
public final class BasicAuthenticator: Sendable {
    public enum Verdict: Sendable, Equatable {
        case granted(user: String)
        /// No credentials, unreadable ones, an unknown user or a wrong password.
        case denied
        /// The credentials would need a bcrypt and every permit for one is taken: try again.
        case busy
    }

    private let hashes: [String: String]
    /// Verified for nobody: what an unknown user's password is hashed against.
    private let decoyHash: String
    private let secret: [UInt8]
    private let remembered = Locked<[String: [UInt8]]>([:])
    private let hashing: Permits
    private let hashCount = Locked(0)

    /// - Parameter concurrentHashing: how many bcrypt computations may run at once (at least 1);
    ///   keep it below the server's thread count.
    public init(passwordFile: PasswordFile, concurrentHashing: Int) throws(CredentialsError) {
        hashes = passwordFile.hashes
        let cost = passwordFile.hashes.values.compactMap(PasswordFile.bcryptCost).max() ?? 5
        var random = SystemRandomNumberGenerator()
        secret = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        let decoyPassword = (0..<16).map { _ in UInt8.random(in: UInt8(ascii: "a")...UInt8(ascii: "z"), using: &random) }
        decoyHash = String(decoding: try Bcrypt.hash(decoyPassword, setting: try Bcrypt.newSetting(cost: cost)), as: UTF8.self)
        hashing = Permits(capacity: max(1, concurrentHashing))
    }

    /// bcrypt computations done so far (remembered credentials need none).
    public var hashings: Int { hashCount.value }

    /// The verdict on a request whose `Authorization` header is `authorization` (nil: none sent).
    public func verdict(authorization: String?) -> Verdict {
        guard let authorization, let (user, password) = Self.basicCredentials(authorization) else { return .denied }
        // A NUL would end the password early for libcrypt: "secret\0anything" must not pass as "secret".
        guard !password.contains(0) else { return .denied }
        var keyed = secret
        keyed.reserveCapacity(secret.count + user.utf8.count + 1 + password.count)
        keyed += user.utf8
        keyed.append(0)
        keyed += password
        let digest = SHA256.digest(keyed)
        wipe(&keyed)
        if let known = remembered.withLock({ $0[user] }), constantTimeEqual(known, digest) {
            return .granted(user: user)
        }
        let stored = hashes[user]
        let matched = hashing.withPermit { () -> Bool in
            hashCount.withLock { $0 += 1 }
            let setting = stored ?? decoyHash
            guard let computed = try? Bcrypt.hash(password, setting: setting) else { return false }
            return constantTimeEqual(computed, Array(setting.utf8))
        }
        switch matched {
        case nil:
            return .busy
        case true? where stored != nil:
            remembered.withLock { $0[user] = digest }
            return .granted(user: user)
        default:
            return .denied
        }
    }

    /// The user and password of `Basic <base64(user:password)>`; the scheme's case does not matter.
    /// nil for another scheme, invalid base64, no colon, or a user name that is not UTF-8.
    static func basicCredentials(_ header: String) -> (user: String, password: [UInt8])? {
        let trimmed = header.drop { $0 == " " || $0 == "\t" }
        guard trimmed.utf8.count > 6, trimmed.utf8.prefix(5).map({ $0 | 0x20 }).elementsEqual("basic".utf8),
              trimmed.utf8.dropFirst(5).first == UInt8(ascii: " ") else { return nil }
        var token = trimmed.dropFirst(6).drop { $0 == " " }
        while token.last == " " || token.last == "\t" { token.removeLast() }
        guard let decoded = Base64.decode(token.utf8), let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
              let user = String(validating: decoded[..<colon], as: UTF8.self) else { return nil }
        return (user, Array(decoded[(colon + 1)...]))
    }
}
