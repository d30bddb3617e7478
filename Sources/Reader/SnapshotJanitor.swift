import CounterStore
import Foundation

/// One server thread's store connections, behind a lock that the thread holds while it
/// answers and that the janitor takes to end snapshots the thread left open when it went idle.
final class StoreSlot: @unchecked Sendable {
    // @unchecked: `reader` (not Sendable) is touched only while `lock` is held, by the owning
    // server thread during a request or by the janitor between requests — never both at once.
    private let lock = NSLock()
    private var reader: CounterReader?
    let location: StoreLocation
    let snapshotAge: Duration

    init(location: StoreLocation, snapshotAge: Duration) {
        self.location = location
        self.snapshotAge = snapshotAge
    }

    /// Runs `body` with this thread's reader, opening it on first use, holding its snapshots
    /// for up to `snapshotAge` across requests (zero: one snapshot per query, as SQLite does
    /// by itself). After an error the reader releases its snapshots and is rebuilt next time.
    func withReader<T>(_ body: (CounterReader) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        let current = try reader ?? CounterReader(location: location)
        reader = current
        if let since = current.snapshotsHeldSince, ContinuousClock.now - since > snapshotAge {
            current.releaseSnapshots()
        }
        do {
            if snapshotAge > .zero { try current.holdSnapshots() }
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
        guard lock.try() else { return }
        defer { lock.unlock() }
        if let reader, let since = reader.snapshotsHeldSince, ContinuousClock.now - since > snapshotAge {
            reader.releaseSnapshots()
        }
    }
}

/// Ends the snapshots of server threads that went idle, so that no snapshot outlives
/// `snapshotAge` by much and the realtime store's write-ahead log keeps being recycled.
final class SnapshotJanitor: @unchecked Sendable {
    // @unchecked: `slots` and `stopped` are only touched while `condition` is locked.
    private let condition = NSCondition()
    private var slots: [StoreSlot] = []
    private var stopped = false

    init(interval: Duration) {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let thread = Thread { [self] in
            Thread.current.name = "snap-janitor"
            condition.lock()
            while !stopped {
                _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
                let current = slots
                condition.unlock()
                for slot in current { slot.releaseStaleSnapshots() }
                condition.lock()
            }
            condition.unlock()
        }
        thread.start()
    }

    func register(_ slot: StoreSlot) {
        condition.lock()
        slots.append(slot)
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        slots.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
