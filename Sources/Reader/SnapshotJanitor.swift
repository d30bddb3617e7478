import Runtime

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
