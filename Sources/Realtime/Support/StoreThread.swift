import CounterStore
import Logging
import Runtime

/// The realtime store on a thread of its own (`JobThread`), so that a flush writes SQLite
/// while the polling thread goes on parsing and counting (on two cores the two overlap
/// almost fully). The store is opened, used and closed on that thread only.
typealias StoreThread = JobThread<any RealtimeWriter>

extension JobThread where Resource == any RealtimeWriter {
    /// Opens the store on a new thread; throws what opening threw. With `earlierOffsets`, the
    /// writer forgets those before its first flush and reads none of them meanwhile.
    convenience init(store: StoreBackend, forgetting earlierOffsets: EarlierBrokerOffsets? = nil, logger: Logger) throws {
        try self.init(name: "rt-store", open: {
            let writer = try store.openRealtimeWriter()
            guard let earlierOffsets else { return writer }
            return WriterForgettingEarlierOffsets(writer, forgetting: earlierOffsets, logger: logger)
        })
    }
}
