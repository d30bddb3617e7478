#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The wall clock, as stored with flushes and batch runs and shown by `/v1/status`.
public enum WallClock {
    /// Milliseconds since the Unix epoch.
    public static func epochMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}

extension Duration {
    /// The duration in seconds, fractions included, for figures, logs and Foundation's intervals.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
