#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The wall clock: where the product takes "now" from — the reader's default ranges, the
/// archiver's stream time and the hours it closes, the demo's history, the times stored with
/// flushes and batch runs and shown by `/v1/status`. Every builder's configuration carries one
/// (`.system` unless told otherwise), so a test can hold it still instead of waiting for the
/// calendar.
public struct WallClock: Sendable {
    @usableFromInline let read: @Sendable () -> Int64

    /// A clock that reads `epochMilliseconds` whenever it is asked.
    public init(epochMilliseconds read: @escaping @Sendable () -> Int64) {
        self.read = read
    }

    /// Milliseconds since the Unix epoch.
    @inlinable
    public func epochMilliseconds() -> Int64 { read() }

    /// The operating system's real-time clock.
    public static let system = WallClock {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// A clock held still at `epochMilliseconds`.
    public static func fixed(atEpochMilliseconds milliseconds: Int64) -> WallClock {
        WallClock { milliseconds }
    }
}

extension Duration {
    /// The duration in seconds, fractions included, for figures, logs and Foundation's intervals.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
