import CounterpointCore
import CounterStore

/// What the hot path counts into: every signal per (subject, hour), the plays by waveform
/// bucket, client and country, and their listeners, of tracks and creators, flushed together.
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

    /// The tables as the store's rows, one `CounterRows` per subject kind that has any (sorting
    /// the per-play records: on the store thread), each sorted in the realtime table's
    /// (hour, id) order and merged in one sweep.
    mutating func rows() throws -> [CounterRows] {
        var rows: [CounterRows] = []
        for kind in SubjectKind.allCases {
            encodedDimensions.removeAll()
            encodedListeners.removeAll()
            let increments = events.withTables(of: kind) {
                $0.encodeRows(.hourThenID, dimensions: &encodedDimensions, listeners: &encodedListeners)
            }
            if kind != .track, increments.count == 0, encodedDimensions.count == 0 { continue }
            rows.append(try CounterRows.realtime(sorted: increments, dimensions: encodedDimensions, listeners: encodedListeners, of: kind))
        }
        return rows
    }
}
