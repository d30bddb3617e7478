import CounterStore
import Runtime

/// The realtime store on a thread of its own (`JobThread`), so that a flush writes SQLite
/// while the polling thread goes on parsing and counting (on two cores the two overlap
/// almost fully). The store is opened, used and closed on that thread only.
typealias StoreThread = JobThread<any RealtimeWriter>

extension JobThread where Resource == any RealtimeWriter {
    /// Opens the store on a new thread; throws what opening threw.
    convenience init(store: StoreBackend) throws {
        try self.init(name: "rt-store", open: { try store.openRealtimeWriter() })
    }
}
