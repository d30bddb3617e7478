import CounterpointCore
import CounterStore
import Runtime

/// One server thread's store connections, behind a lock that the thread holds while it
/// answers and that the janitor takes to end snapshots the thread left open when it went idle.
final class StoreSlot: Sendable {
    /// Touched by the owning server thread during a request or by the janitor between
    /// requests — never both at once.
    private let reader = Locked<CounterReader?>(nil)
    let store: StoreBackend
    let snapshotAge: Duration

    init(store: StoreBackend, snapshotAge: Duration) {
        self.store = store
        self.snapshotAge = snapshotAge
    }

    /// What `body` reads with this thread's reader, and the freshness of the snapshots it read
    /// (the freshness an answer reports is that of the snapshots its counts came from).
    func read<T>(_ body: (CounterReader) throws -> T) throws -> (T, Freshness) {
        try withReader { reader in (try body(reader), reader.lastFreshness) }
    }

    /// Runs `body` with this thread's reader, opening it on first use, holding its snapshots
    /// for up to `snapshotAge` across requests (zero: one snapshot per query, as SQLite does
    /// by itself). After an error the reader releases its snapshots and is rebuilt next time.
    func withReader<T>(_ body: (CounterReader) throws -> T) throws -> T {
        try reader.withLock { reader in try Self.withReader(&reader, store: store, snapshotAge: snapshotAge, body) }
    }

    private static func withReader<T>(_ reader: inout CounterReader?, store: StoreBackend, snapshotAge: Duration,
                                      _ body: (CounterReader) throws -> T) throws -> T {
        let current = try reader ?? store.openReader()
        reader = current
        do {
            if let since = current.snapshotsHeldSince, ContinuousClock.now - since > snapshotAge {
                // Stale: ended and taken anew in one step.
                try current.renewSnapshots()
            } else if snapshotAge > .zero {
                try current.holdSnapshots()
            }
            return try body(current)
        } catch {
            current.releaseSnapshots()
            reader = nil
            throw error
        }
    }

    /// Ends snapshots older than `snapshotAge` unless the owning thread is answering right now
    /// (then it renews them itself).
    func releaseStaleSnapshots() {
        let snapshotAge = self.snapshotAge
        _ = reader.withLockIfAvailable { reader in
            if let reader, let since = reader.snapshotsHeldSince, ContinuousClock.now - since > snapshotAge {
                reader.releaseSnapshots()
            }
        }
    }
}

/// Ends the snapshots of server threads that went idle, so that no snapshot outlives
/// `snapshotAge` by much and the realtime store's write-ahead log keeps being recycled.
final class SnapshotJanitor: Sendable {
    private let slots = Locked<[StoreSlot]>([])
    private let thread: PeriodicThread

    init(interval: Duration) {
        let slots = self.slots
        thread = PeriodicThread(name: "snap-janitor", every: interval) {
            for slot in slots.withLock({ $0 }) { slot.releaseStaleSnapshots() }
        }
    }

    func register(_ slot: StoreSlot) {
        slots.withLock { $0.append(slot) }
    }

    /// Stops and joins the janitor's thread.
    func stop() {
        thread.stop()
        slots.withLock { $0.removeAll() }
    }
}
