#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The free space of the file system that holds a path: what names a full disk as the cause
/// when a write or an open fails, so that an operator is not sent looking at permissions.
public enum FreeSpace {
    /// Below this many free bytes a file system counts as full: less than SQLite's `-shm` file
    /// and a few pages of `-wal`, or one buffer of an event-log file, need.
    public static let noRoom: Int64 = 1 << 20

    /// Bytes an unprivileged writer may still use on the file system holding `path` (or its
    /// nearest existing ancestor); nil when the system cannot say.
    public static func available(at path: String) -> Int64? {
        var candidate = path.isEmpty ? "." : path
        while true {
            var stats = statvfs()
            if statvfs(candidate, &stats) == 0 {
                return Int64(stats.f_bavail) * Int64(stats.f_frsize)
            }
            guard errno == ENOENT, candidate != "/", let slash = candidate.lastIndex(of: "/") else { return nil }
            candidate = slash == candidate.startIndex ? "/" : String(candidate[..<slash])
        }
    }

    /// True when the file system holding `path` has less than `noRoom` bytes free.
    public static func isExhausted(at path: String) -> Bool {
        guard let free = available(at: path) else { return false }
        return free < noRoom
    }

    /// The cause as every component words it: "no free space on <path>".
    public static func cause(at path: String) -> String {
        "no free space on \(path)"
    }
}
