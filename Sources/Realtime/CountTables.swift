import CounterpointCore
import CounterStore

/// What the hot path counts into: plays per (track, hour), the same plays by waveform bucket,
/// client and country, and their listeners, flushed together.
struct CountTables {
    var counts = PlayCounts(minimumCapacity: 1 << 16)
    var dimensions = DimensionCounts(minimumCapacity: 1 << 16)
    var listeners = ListenerCounts(minimumCapacity: 1 << 16)
    /// The payloads' blobs while a flush builds its rows, kept with their memory between flushes.
    private var encodedDimensions = EncodedRows()
    private var encodedListeners = EncodedRows()

    mutating func removeAll() {
        counts.removeAll()
        dimensions.removeAll()
        listeners.removeAll()
        encodedDimensions.removeAll()
        encodedListeners.removeAll()
    }

    /// The tables as the store's rows (sorting the per-play records: on the store thread), each
    /// sorted in the realtime table's (hour, track) order and merged in one sweep.
    mutating func rows() throws -> CounterRows {
        encodedDimensions.removeAll()
        encodedListeners.removeAll()
        dimensions.encodeRows(.hourThenTrack, into: &encodedDimensions)
        listeners.encodeRows(.hourThenTrack, into: &encodedListeners)
        return try CounterRows.realtime(sorted: counts.sortedElements(.hourThenTrack), dimensions: encodedDimensions,
                                        listeners: encodedListeners)
    }
}
