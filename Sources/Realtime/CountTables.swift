import CounterpointCore
import CounterStore

/// What the hot path counts into: every signal per (track, hour), the plays by waveform
/// bucket, client and country, and their listeners, flushed together.
struct CountTables {
    var counts = HourCounts(minimumCapacity: 1 << 16)
    var dimensions = DimensionCounts(minimumCapacity: 1 << 16)
    var listeners = ListenerCounts(minimumCapacity: 1 << 16)

    /// Counts one valid event: its weight in its signal, and a play's dimensions and listener.
    @inline(__always)
    mutating func add(_ event: Event, _ playDimensions: PlayDimensions) {
        counts.add(trackID: event.trackID, hour: event.hour, signal: event.type.signal, weight: event.type.weight)
        guard event.type == .play else { return }
        dimensions.add(trackID: event.trackID, hour: event.hour, playDimensions)
        listeners.add(trackID: event.trackID, hour: event.hour, listenerID: playDimensions.listenerID)
    }
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
