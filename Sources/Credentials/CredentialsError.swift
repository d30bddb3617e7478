#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a password file cannot be used, or libcrypt failed. Each is one line that names the file
/// (and the line) and never shows a hash or a password.
public enum CredentialsError: Error, CustomStringConvertible, Equatable {
    /// A file cannot be opened or read; `what` names it for people ("the TLS key").
    case unreadableFile(what: String, path: String, reason: String)
    /// A line is not `user:hash` with a bcrypt hash (`line` counts from 1).
    case malformedLine(path: String, line: Int, reason: String)
    /// The file names no user at all: it would lock everyone out.
    case noUsers(path: String)
    /// libcrypt refused to hash (`operation` says what was asked of it).
    case crypt(operation: String, reason: String)

    public var description: String {
        switch self {
        case .unreadableFile(let what, let path, let reason):
            return "cannot read \(what) \(path): \(reason)"
        case .malformedLine(let path, let line, let reason):
            return "password file \(path), line \(line): \(reason)"
        case .noUsers(let path):
            return "password file \(path) names no user (add one with htpasswd -B \(path) NAME)"
        case .crypt(let operation, let reason):
            return "libcrypt cannot \(operation): \(reason)"
        }
    }

    /// libcrypt reports failure as a null result with `errno` set; this is that, as an error.
    static func cryptFailure(_ operation: String, errno code: Int32) -> CredentialsError {
        .crypt(operation: operation, reason: code == 0 ? "no reason given" : String(cString: strerror(code)))
    }
}
