import CounterpointCore

extension CounterRows {
    /// A flush's increments (every signal), dimension counts and listener sketches as the realtime
    /// table's rows: checked by the one validity rule, summed and merged per (hour, track), in the
    /// key order every writer locks and sweeps them in; increments of 0 and empty blobs are left
    /// out. Throws `malformedListeners` for a sketch that does not decode.
    public static func realtime(_ increments: some Collection<CountRow>, dimensions: [EncodedRow] = [],
                                listeners: [EncodedRow] = [], of kind: SubjectKind = .track) throws -> CounterRows {
        func inKeyOrder(_ rows: [EncodedRow]) -> EncodedRows {
            EncodedRows(rows.sorted { ($0.hour.index, $0.id) < ($1.hour.index, $1.id) })
        }
        return try realtime(sorted: CountRowList(increments.sorted { ($0.hour.index, $0.id) < ($1.hour.index, $1.id) }),
                            dimensions: inKeyOrder(dimensions), listeners: inKeyOrder(listeners), of: kind)
    }

    /// The same rows from sources already in (hour, track) order — the increments
    /// (`HourCounts.sortedElements(.hourThenID)`, every signal) and one blob per key of each payload
    /// (`EncodedRows` of `DimensionCounts` and `ListenerCounts`) — by one merging sweep: a
    /// key's plays and blobs go into its row as they are, with no blob merge and no array per
    /// row (the realtime consumer's flush). A key repeated within a source merges into its row
    /// as `append` does.
    public static func realtime(sorted increments: CountRowList, dimensions: EncodedRows, listeners: EncodedRows,
                                of kind: SubjectKind = .track) throws -> CounterRows {
        var rows = CounterRows(Catalogue.realtime(kind))
        rows.reserveCapacity(increments.count)
        var (next, nextDimensions, nextListeners) = (0, 0, 0)
        try dimensions.withBlobs { storedDimensions in
            try listeners.withBlobs { storedSketch in
                while true {
                    // The least (hour, id) key at the heads of the three sources.
                    var key: (hour: Int64, id: Int64)?
                    func consider(_ hour: Int64, _ id: Int64) {
                        if key.map({ (hour, id) < $0 }) ?? true { key = (hour, id) }
                    }
                    if next < increments.count { consider(increments[next].hour.index, increments[next].id) }
                    if nextDimensions < dimensions.count { consider(dimensions.hours[nextDimensions], dimensions.ids[nextDimensions]) }
                    if nextListeners < listeners.count { consider(listeners.hours[nextListeners], listeners.ids[nextListeners]) }
                    guard let (hour, id) = key else { break }
                    let subject = Subject(kind, id)

                    var counts = SignalCounts()
                    if next < increments.count, increments[next].hour.index == hour, increments[next].id == id {
                        counts = increments[next].counts
                        try RowRule.check(subject, hour: Hour(index: hour), plays: counts.plays)
                        next += 1
                    }
                    var dimensionBlob = noBlob
                    if nextDimensions < dimensions.count, dimensions.hours[nextDimensions] == hour, dimensions.ids[nextDimensions] == id {
                        dimensionBlob = storedDimensions(nextDimensions)
                        if !dimensionBlob.isEmpty { try RowRule.check(subject, hour: Hour(index: hour), plays: 0) }
                        nextDimensions += 1
                    }
                    var (listenerPlays, sketch): (Int64, UnsafeRawBufferPointer) = (0, noBlob)
                    if nextListeners < listeners.count, listeners.hours[nextListeners] == hour, listeners.ids[nextListeners] == id {
                        sketch = storedSketch(nextListeners)
                        if !sketch.isEmpty {
                            listenerPlays = listeners.values[nextListeners]
                            try RowRule.check(subject, hour: Hour(index: hour), plays: listenerPlays)
                        }
                        nextListeners += 1
                    }
                    // Increments of 0 and empty blobs add nothing.
                    guard !counts.isZero || !dimensionBlob.isEmpty || !sketch.isEmpty else { continue }
                    try rows.append(hour, id, counts: counts, dimensions: dimensionBlob, listenerPlays: listenerPlays, listeners: sketch)
                }
            }
        }
        return rows
    }

    /// How many (subject, hour) rows the flush holds (for its report).
    public var rowCount: Int { count }

    /// Whose rows these are.
    public var subject: SubjectKind { table.subject }
}
