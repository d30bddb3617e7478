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
    /// Raises the soft limit to the hard one; where that is refused, the limit stays as it was.
    public static func raiseToHardLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
