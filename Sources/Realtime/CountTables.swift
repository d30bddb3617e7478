import CounterpointCore
import CounterStore

/// What the hot path counts into: every signal per (track, hour), the plays by waveform
/// bucket, client and country, and their listeners, flushed together.
struct CountTables {
    var events = EventTables(keys: 1 << 16, plays: 1 << 16)
    /// The payloads' blobs while a flush builds its rows, kept with their memory between flushes.
    private var encodedDimensions = EncodedRows()
    private var encodedListeners = EncodedRows()

    mutating func removeAll() {
        events.removeAll()
        encodedDimensions.removeAll()
        encodedListeners.removeAll()
    }

    /// The tables as the store's rows (sorting the per-play records: on the store thread), each
    /// sorted in the realtime table's (hour, track) order and merged in one sweep.
    mutating func rows() throws -> CounterRows {
        encodedDimensions.removeAll()
        encodedListeners.removeAll()
        events.dimensions.encodeRows(.hourThenTrack, into: &encodedDimensions)
        events.listeners.encodeRows(.hourThenTrack, into: &encodedListeners)
        return try CounterRows.realtime(sorted: events.counts.sortedElements(.hourThenTrack), dimensions: encodedDimensions,
                                        listeners: encodedListeners)
    }
}
