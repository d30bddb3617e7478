/// What one batch unit or one realtime flush counts events into: every signal per (track, hour)
/// (`HourCounts`), the plays by waveform bucket, client and country (`DimensionCounts`) and their
/// listeners (`ListenerCounts`). The one place that says how a valid event counts.
public struct EventTables: Sendable {
    public var counts: HourCounts
    public var dimensions: DimensionCounts
    public var listeners: ListenerCounts

    /// Sized for about `keys` (track, hour)s and `plays` plays, so the tables do not rehash as they fill.
    public init(keys: Int, plays: Int) {
        counts = HourCounts(minimumCapacity: keys)
        dimensions = DimensionCounts(minimumCapacity: plays)
        listeners = ListenerCounts(minimumCapacity: plays)
    }

    /// Counts one valid event: its weight in its signal, and a play's dimensions and listener.
    @inlinable
    public mutating func add(trackID: Int64, hour: Hour, type: EventType, _ play: PlayDimensions) {
        counts.add(trackID: trackID, hour: hour, signal: type.signal, weight: type.weight)
        guard type == .play else {
            // A comment's place on the waveform, or a deletion's taking one back (SPEC §11).
            if type.signal == .comments, let bucket = play.waveformBucket {
                dimensions.addComment(trackID: trackID, hour: hour, waveformBucket: bucket, weight: type.weight)
            }
            return
        }
        dimensions.add(trackID: trackID, hour: hour, play)
        listeners.add(trackID: trackID, hour: hour, listenerID: play.listenerID)
    }

    /// Forgets every key, keeping the memory.
    public mutating func removeAll() {
        counts.removeAll()
        dimensions.removeAll()
        listeners.removeAll()
    }
}
