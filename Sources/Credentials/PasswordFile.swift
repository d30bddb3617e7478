#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An Apache password file, as `htpasswd -B` writes it: one `user:hash` per line, bcrypt hashes
/// only (`$2y$`, or `$2b$` as other tools write the same algorithm). Blank lines and lines that
/// start with `#` are skipped, as Apache does; any other line that is not a user and a bcrypt hash
/// is an error naming the line, so a typo never silently locks someone out.
public struct PasswordFile: Sendable {
    public let path: String
    /// User name → stored bcrypt hash.
    let hashes: [String: String]

    /// The users the file names, sorted.
    public var users: [String] { hashes.keys.sorted() }

    /// Reads and parses the file at `path`.
    public static func load(path: String) throws(CredentialsError) -> PasswordFile {
        try PasswordFile(path: path, contents: try SecretFile.read(path, what: "the password file"))
    }

    /// Parses `contents` as the file `path` (which only appears in errors).
    public init(path: String, contents: [UInt8]) throws(CredentialsError) {
        var hashes: [String: String] = [:]
        var firstLine: [String: Int] = [:]
        for (index, rawLine) in contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            func malformed(_ reason: String) -> CredentialsError {
                .malformedLine(path: path, line: lineNumber, reason: reason)
            }
            var line = rawLine[...]
            while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
                line.removeLast()
            }
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            guard let text = String(validating: line, as: UTF8.self) else { throw malformed("not UTF-8 text") }
            guard let colon = text.firstIndex(of: ":") else { throw malformed("expected user:hash, found no ':'") }
            let user = String(text[..<colon])
            let hash = String(text[text.index(after: colon)...])
            guard !user.isEmpty else { throw malformed("the user name is empty") }
            guard user.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
                throw malformed("the user name has a space or a control character")
            }
            guard hash.hasPrefix("$2y$") || hash.hasPrefix("$2b$") else {
                throw malformed("user '\(user)' has no bcrypt hash ($2y$ or $2b$); make it with htpasswd -B")
            }
            guard Self.bcryptCost(hash) != nil else {
                throw malformed("user '\(user)' has a malformed bcrypt hash")
            }
            if let first = firstLine[user] { throw malformed("user '\(user)' appears again (first on line \(first))") }
            firstLine[user] = lineNumber
            hashes[user] = hash
        }
        guard !hashes.isEmpty else { throw .noUsers(path: path) }
        self.path = path
        self.hashes = hashes
    }

    /// The cost of a well-formed bcrypt hash (`$2y$CC$` + 22 characters of salt + 31 of digest,
    /// in bcrypt's alphabet, cost 4 to 31), or nil.
    static func bcryptCost(_ hash: String) -> Int? {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[6] == UInt8(ascii: "$"),
              let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)), (4...31).contains(cost),
              bytes[7...].allSatisfy(isBcryptAlphabet) else { return nil }
        return cost
    }

    private static func isBcryptAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return false
        }
    }
}
