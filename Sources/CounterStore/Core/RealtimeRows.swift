import CounterpointCore

extension CounterRows {
    /// A flush's increments, dimension counts and listener sketches as the realtime table's
    /// rows: checked by the one validity rule, summed and merged per (hour, track), in the key
    /// order every writer locks and sweeps them in; increments of 0 plays and empty blobs are
    /// left out. Throws `malformedListeners` for a sketch that does not decode.
    public static func realtime(_ increments: some Collection<CountRow>, dimensions: [DimensionRow] = [],
                                listeners: [SketchRow] = []) throws -> CounterRows {
        for increment in increments {
            try RowRule.check(trackID: increment.trackID, hour: increment.hour, plays: increment.plays)
        }
        for row in dimensions where !row.encoded.isEmpty {
            try RowRule.check(trackID: row.trackID, hour: row.hour, plays: 0)
        }
        for row in listeners where !row.encoded.isEmpty {
            try RowRule.check(trackID: row.trackID, hour: row.hour, plays: row.listenerPlays)
        }
        // Three lists in (hour, track) order, one entry per source row: `append` adds up the
        // entries of a key that come one after another.
        var entries: [(hour: Int64, track: Int64, entry: RealtimeEntry)] = []
        entries.reserveCapacity(increments.count + dimensions.count + listeners.count)
        for row in increments where row.plays > 0 { entries.append((row.hour.index, row.trackID, .count(row))) }
        for row in dimensions where !row.encoded.isEmpty { entries.append((row.hour.index, row.trackID, .dimensions(row))) }
        for row in listeners where !row.encoded.isEmpty { entries.append((row.hour.index, row.trackID, .listeners(row))) }
        entries.sort { ($0.hour, $0.track) < ($1.hour, $1.track) }
        var rows = CounterRows(Catalogue.realtime)
        rows.reserveCapacity(increments.count)
        for (hour, track, entry) in entries {
            switch entry {
            case .count(let row):
                try rows.append(hour, track, plays: row.plays, dimensions: noBlob)
            case .dimensions(let row):
                try row.encoded.withUnsafeBytes { try rows.append(hour, track, plays: 0, dimensions: $0) }
            case .listeners(let row):
                try row.encoded.withUnsafeBytes {
                    try rows.append(hour, track, plays: 0, dimensions: noBlob, listenerPlays: row.listenerPlays, listeners: $0)
                }
            }
        }
        return rows
    }

    /// How many (track, hour) rows and plays the flush holds (for its report).
    public var rowCount: Int { count }
}

/// One source row of a flush, before `CounterRows.realtime` sums them per key.
private enum RealtimeEntry {
    case count(CountRow), dimensions(DimensionRow), listeners(SketchRow)
}
