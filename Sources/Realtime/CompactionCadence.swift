/// When flushes also compact: every `interval`, and at once again while the last compaction
/// stopped at its row budget with covered rows left behind.
struct CompactionCadence {
    /// How often flushes look for realtime rows of hours the batch layer has covered. Deleting
    /// them only saves space (the merge rule already answers those hours from the batch layer),
    /// so this only bounds how long they linger.
    static let interval: Duration = .seconds(10)
    /// Rows one compaction transaction deletes at most, so that it delays the flush after it by
    /// milliseconds, not seconds.
    static let rowsPerFlush = 20_000

    private var last: ContinuousClock.Instant?
    private var backlog = false

    /// Whether the flush starting `now` compacts too; if so, counts it as done.
    mutating func isDue(at now: ContinuousClock.Instant) -> Bool {
        if !backlog, let last, now - last < Self.interval { return false }
        last = now
        return true
    }

    /// A compaction deleted `rows` (a full budget means more are left), or failed: covered rows
    /// are never read, so they only cost space, and the next interval tries again.
    mutating func finished(_ rows: Result<Int, any Error>) {
        backlog = (try? rows.get()).map { $0 >= Self.rowsPerFlush } ?? false
    }
}
