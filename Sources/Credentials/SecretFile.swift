#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the small files secrets come from (a password file, a TLS key) whole, at start.
public enum SecretFile {
    /// The bytes of the file at `path`; `what` names it in the error ("the TLS key").
    public static func read(_ path: String, what: String) throws(CredentialsError) -> [UInt8] {
        func failure() -> CredentialsError {
            .unreadableFile(what: what, path: path, reason: String(cString: strerror(errno)))
        }
        guard let file = fopen(path, "rb") else { throw failure() }
        defer { fclose(file) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        defer { wipe(&chunk) }
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            contents += chunk[..<count]
            if count < chunk.count { break }
        }
        if ferror(file) != 0 { throw failure() }
        return contents
    }
}

/// Overwrites `bytes` with zeroes in a way the optimizer may not drop: no copy of a secret stays
/// in memory that is about to be freed.
func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { if let start = $0.baseAddress { explicit_bzero(start, $0.count) } }
}
