#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit of open files. Linux starts most processes with a soft limit of 1,024
/// under a far higher hard one, kept low only for programs that still use `select`. The
/// archiver holds a file per partition and open hour, the reader a socket per connection and
/// librdkafka one per broker: a topic of several hundred partitions, or a reader under a
/// thousand dashboard connections, ran out at 1,024. None of these use `select`, so the soft
/// limit is raised to the hard one at start, as Go's runtime and most servers do.
public enum OpenFileLimit {
    /// Raises the soft limit to the hard one; returns the soft limit after (the one before
    /// when it cannot be raised, which changes nothing else).
    @discardableResult
    public static func raiseToHardLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        guard limit.rlim_cur < limit.rlim_max else { return UInt64(limit.rlim_cur) }
        let before = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return UInt64(before) }
        return UInt64(limit.rlim_cur)
    }
}
