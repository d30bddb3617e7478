import CounterpointCore

extension CounterRows {
    /// A flush's increments and dimension counts as the realtime table's rows: checked by the
    /// one validity rule, summed and merged per (hour, track), in the key order every writer
    /// locks and sweeps them in; increments of 0 plays and empty blobs are left out.
    static func realtime(_ increments: some Collection<CountRow>, _ dimensions: [DimensionRow]) throws -> CounterRows {
        for increment in increments {
            try RowRule.check(trackID: increment.trackID, hour: increment.hour, plays: increment.plays)
        }
        for row in dimensions where !row.encoded.isEmpty {
            try RowRule.check(trackID: row.trackID, hour: row.hour, plays: 0)
        }
        let counts = increments.filter { $0.plays > 0 }.sorted { ($0.hour, $0.trackID) < ($1.hour, $1.trackID) }
        let blobs = dimensions.filter { !$0.encoded.isEmpty }.sorted { ($0.hour, $0.trackID) < ($1.hour, $1.trackID) }
        var rows = CounterRows(Catalogue.realtime)
        rows.reserveCapacity(counts.count)
        // Two sorted lists merged: `append` adds up the rows of a key that come one after another.
        var next = 0
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        for count in counts {
            while next < blobs.count, (blobs[next].hour, blobs[next].trackID) <= (count.hour, count.trackID) {
                try blobs[next].encoded.withUnsafeBytes { try rows.append(blobs[next].hour.index, blobs[next].trackID, plays: 0, dimensions: $0) }
                next += 1
            }
            try rows.append(count.hour.index, count.trackID, plays: count.plays, dimensions: none)
        }
        for blob in blobs[next...] {
            try blob.encoded.withUnsafeBytes { try rows.append(blob.hour.index, blob.trackID, plays: 0, dimensions: $0) }
        }
        return rows
    }
}
