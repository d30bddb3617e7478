/// A fixed number of permits taken without waiting: a bound on how much of some costly work
/// runs at once, for callers that must answer something else rather than queue (a server
/// thread that waits for a permit stalls every connection it owns).
public final class Permits: Sendable {
    public let capacity: Int
    private let available: Locked<Int>

    /// - Parameter capacity: how many `withPermit` bodies may run at once; at least 1.
    public init(capacity: Int) {
        precondition(capacity >= 1, "Permits needs a capacity of at least 1")
        self.capacity = capacity
        available = Locked(capacity)
    }

    /// Runs `body` holding a permit and returns its result, or returns nil at once, without
    /// running it, when every permit is held.
    public func withPermit<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result? {
        let taken = available.withLock { available in
            guard available > 0 else { return false }
            available -= 1
            return true
        }
        guard taken else { return nil }
        defer { available.withLock { $0 += 1 } }
        return try body()
    }
}
