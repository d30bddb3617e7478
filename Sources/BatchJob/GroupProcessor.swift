import CounterpointCore
import CounterStore
import EventLogs

/// Parses, validates, de-duplicates and counts the events of one work unit at a time (the
/// files of one hour, usually) — one worker's share of a run. Not thread-safe: one worker,
/// one processor. A value the worker keeps in a local variable: its tables change at every
/// event, and as a class's properties each change paid a run-time exclusivity check.
///
/// De-duplication is per hour (the key is `(hour, event_id)`), and the set of seen ids is
/// emptied after every unit, which keeps memory bounded by the largest unit rather than by
/// the size of the logs. An event filed under another hour than its own is still counted in
/// its own hour (the store adds up counts that arrive for one (track, hour) twice), but is
/// de-duplicated only within its unit; the archiver and `generate` never misfile events.
struct GroupProcessor {
    private var filter: EventFilter
    private var seen: SeenEvents
    private var tables: EventTables

    /// - Parameters:
    ///   - target: the hours being rebuilt; valid events of other hours are only counted
    ///     as `outsideRange`.
    ///   - expectedEventsPerUnit: a sizing hint, so hash tables do not rehash as they fill.
    init(target: Coverage, expectedEventsPerUnit: Int) {
        filter = EventFilter(target: target)
        seen = SeenEvents(minimumCapacity: expectedEventsPerUnit)
        tables = EventTables(keys: max(1024, expectedEventsPerUnit / 4), plays: max(1024, expectedEventsPerUnit / 2))
    }

    /// What this processor has counted so far, over all its units.
    var tally: GroupTally { filter.tally }

    /// Reads one file, the `index`th of hour unit `unit`, calling `progress` with the bytes
    /// consumed after each chunk.
    mutating func process(_ file: LogFile, unit: Int, index: Int, progress: (Int64) -> Void) throws {
        filter.file = (unit, index)
        let reader = try LogReader(file: file)
        var lastReported: Int64 = 0
        try reader.forEachChunk { chunk, firstLineNumber in
            var lineNumber = firstLineNumber
            LineSplitter.forEachLine(in: chunk) { line in
                self.handle(line, lineNumber: lineNumber, path: file.path)
                lineNumber += 1
            }
            let read = reader.compressedBytesRead
            progress(read - lastReported)
            lastReported = read
        }
    }

    /// Adds the records an `UnpartitionedPass` kept for `hour` (already validated and in the
    /// target), de-duplicated with the unit's other events.
    mutating func absorb(_ records: HourRecords, hour: Hour) throws {
        try records.forEachRecord(of: hour) { trackID, creatorID, type, eventID, playDimensions in
            if seen.insert(eventID, in: hour) {
                tables.add(trackID: trackID, creatorID: creatorID, hour: hour, type: type, playDimensions)
            } else {
                filter.tally.duplicates += 1
            }
        }
    }

    /// Hands over the rows of the unit just processed, in key order, and forgets its event
    /// ids; the tables keep their memory for the next unit.
    mutating func finishUnit() -> UnitRows {
        var unit = UnitRows()
        for kind in SubjectKind.allCases {
            var part = SubjectRows(kind: kind)
            part.rows = tables.withTables(of: kind) {
                $0.encodeRows(.idThenHour, dimensions: &part.dimensions, listeners: &part.listeners)
            }
            unit.parts.append(part)
        }
        tables.removeAll()
        seen.removeAll()
        return unit
    }

    @inline(__always)
    private mutating func handle(_ line: UnsafeRawBufferPointer, lineNumber: Int, path: String) {
        var playDimensions = PlayDimensions()
        guard let event = filter.admit(line, dimensions: &playDimensions, path: path, lineNumber: lineNumber) else { return }
        let hour = event.hour
        if seen.insert(event.eventID, in: hour) {
            tables.add(trackID: event.trackID, creatorID: event.creatorID, hour: hour, type: event.type, playDimensions)
        } else {
            filter.tally.duplicates += 1
        }
    }
}

/// The rows of one unit: a part per subject kind.
struct UnitRows: Sendable {
    var parts: [SubjectRows] = []

    /// The (track, hour) rows (a run's `rows`).
    var trackRows: Int { parts.first { $0.kind == .track }?.rows.count ?? 0 }

    /// Writes every part's rows, calling `wrote` with each row's subject.
    func write(to writer: BatchRowWriter, wrote: (Subject) -> Void) throws {
        for part in parts {
            try part.write(to: writer) { wrote(Subject(part.kind, $0)) }
        }
    }
}

/// The rows of one kind's subjects in one unit, each list in (id, hour) order: every signal, and
/// the dimension counts and listener sketches of the keys that have them, their blobs back to
/// back (no array per row).
struct SubjectRows: Sendable {
    var kind: SubjectKind
    var rows = CountRowList()
    var dimensions = EncodedRows()
    /// Each row's value is the plays that carried a listener.
    var listeners = EncodedRows()

    /// Writes every row with its payloads (a key without dimension counts or listeners has no
    /// entry in that list), lending the blobs, calling `wrote` with each row's id.
    func write(to writer: BatchRowWriter, wrote: (Int64) -> Void) throws {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        var nextDimensions = 0, nextListeners = 0
        try dimensions.withBlobs { dimensionCounts in
            try listeners.withBlobs { sketch in
                for row in rows {
                    var encoded = none
                    if nextDimensions < dimensions.count, dimensions.ids[nextDimensions] == row.id,
                       dimensions.hours[nextDimensions] == row.hour.index {
                        encoded = dimensionCounts(nextDimensions)
                        nextDimensions += 1
                    }
                    var listenerPlays: Int64 = 0, listenerSketch = none
                    if nextListeners < listeners.count, listeners.ids[nextListeners] == row.id,
                       listeners.hours[nextListeners] == row.hour.index {
                        (listenerPlays, listenerSketch) = (listeners.values[nextListeners], sketch(nextListeners))
                        nextListeners += 1
                    }
                    try writer.write(Subject(kind, row.id), hour: row.hour, counts: row.counts, borrowingDimensions: encoded,
                                     listenerPlays: listenerPlays, borrowingListeners: listenerSketch)
                    wrote(row.id)
                }
            }
        }
    }
}
