/// What one kind of subject's events are counted into: every signal per (subject, hour)
/// (`HourCounts`), the plays by waveform bucket, client and country (`DimensionCounts`) and their
/// listeners (`ListenerCounts`).
public struct SubjectTables: Sendable {
    public var counts: HourCounts
    public var dimensions: DimensionCounts
    public var listeners: ListenerCounts

    init(keys: Int, plays: Int) {
        counts = HourCounts(minimumCapacity: keys)
        dimensions = DimensionCounts(minimumCapacity: plays)
        listeners = ListenerCounts(minimumCapacity: plays)
    }

    /// Counts one valid event of the subject `id`: its weight in its signal, and a play's
    /// dimensions and listener.
    @inlinable
    public mutating func add(_ id: Int64, hour: Hour, type: EventType, _ play: PlayDimensions) {
        counts.add(id: id, hour: hour, signal: type.signal, weight: type.weight)
        guard type == .play else {
            // A comment's place on the waveform, or a deletion's taking one back (SPEC §11); a
            // creator's events come without a waveform bucket.
            if type.signal == .comments, let bucket = play.waveformBucket {
                dimensions.addComment(id: id, hour: hour, waveformBucket: bucket, weight: type.weight)
            }
            return
        }
        dimensions.add(id: id, hour: hour, play)
        listeners.add(id: id, hour: hour, listenerID: play.listenerID)
    }

    /// The tables as rows in `order`: every key's counts, and the dimension counts and listener
    /// sketches of the keys that have them, appended to `dimensions` and `listeners` (each row's
    /// value there: the plays that carried a listener). What a batch unit and a flush hand on.
    public mutating func encodeRows(_ order: KeyOrder, dimensions encodedDimensions: inout EncodedRows,
                                    listeners encodedListeners: inout EncodedRows) -> CountRowList {
        dimensions.encodeRows(order, into: &encodedDimensions)
        listeners.encodeRows(order, into: &encodedListeners)
        return counts.sortedElements(order)
    }

    mutating func removeAll() {
        counts.removeAll()
        dimensions.removeAll()
        listeners.removeAll()
    }
}

/// What one batch unit or one realtime flush counts events into: the tables of each subject
/// kind (SPEC §11). The one place that says how a valid event counts.
public struct EventTables: Sendable {
    public var tracks: SubjectTables
    /// The events that named a creator, by creator: their plays without the waveform, which is
    /// a track's.
    public var creators: SubjectTables

    /// Sized for about `keys` (track, hour)s and `plays` plays, so the tables do not rehash as
    /// they fill; the creators' tables start small (a creator's rows are fewer than its tracks').
    public init(keys: Int, plays: Int) {
        tracks = SubjectTables(keys: keys, plays: plays)
        creators = SubjectTables(keys: 1024, plays: 1024)
    }

    /// Runs `body` on the tables of `kind` in place (no copy of them).
    public mutating func withTables<T>(of kind: SubjectKind, _ body: (inout SubjectTables) throws -> T) rethrows -> T {
        switch kind {
        case .track: try body(&tracks)
        case .creator: try body(&creators)
        }
    }

    /// Counts one valid event for its track and, when it names one (`creatorID` ≠ 0), its creator.
    @inlinable
    public mutating func add(trackID: Int64, creatorID: Int64, hour: Hour, type: EventType, _ play: PlayDimensions) {
        tracks.add(trackID, hour: hour, type: type, play)
        guard creatorID != 0 else { return }
        var creatorPlay = play
        creatorPlay.waveformBucket = nil
        creators.add(creatorID, hour: hour, type: type, creatorPlay)
        // Its counts by track, for the creator's tracks ranked.
        creators.dimensions.addTrack(trackID, to: creatorID, hour: hour, signal: type.signal, weight: type.weight)
    }

    /// Forgets every key, keeping the memory.
    public mutating func removeAll() {
        tracks.removeAll()
        creators.removeAll()
    }
}
