/// A delay that doubles with each failure in a row, from `initial` up to `maximum`, and starts
/// over after a success: how a flush, a read of stored offsets or a component restart waits
/// before trying again.
public struct Backoff: Sendable, Equatable {
    public let initial: Duration
    public let maximum: Duration
    /// Failures since the last success.
    public private(set) var failures = 0

    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// Counts a failure and returns how long to wait before the next try.
    public mutating func failed() -> Duration {
        failures += 1
        return current
    }

    /// The delay the last failure called for (`initial` before any).
    public var current: Duration {
        let doublings = min(max(failures - 1, 0), 30)
        return min(maximum, initial * (1 << doublings))
    }

    /// The delay the next failure will call for.
    public var next: Duration {
        var after = self
        return after.failed()
    }

    /// A success: the next failure waits `initial` again.
    public mutating func succeeded() {
        failures = 0
    }
}
