import CounterpointCore

// Rows as arrays, one value per (track, hour), for tests that compare or feed them one by one;
// the product itself hands them on as `EncodedRows`.

extension DimensionCounts {
    /// One row per (track, hour), ordered by track then hour.
    public mutating func rows() -> [DimensionRow] {
        var encoded = EncodedRows()
        encodeRows(.trackThenHour, into: &encoded)
        return (0..<encoded.count).map {
            DimensionRow(trackID: encoded.trackIDs[$0], hour: Hour(index: encoded.hours[$0]), encoded: Array(encoded.bytes[encoded.range($0)]))
        }
    }
}

extension ListenerCounts {
    /// One row per (track, hour) with a listener, ordered by track then hour.
    public mutating func rows() -> [SketchRow] {
        var encoded = EncodedRows()
        encodeRows(.trackThenHour, into: &encoded)
        return (0..<encoded.count).map {
            SketchRow(trackID: encoded.trackIDs[$0], hour: Hour(index: encoded.hours[$0]), listenerPlays: encoded.values[$0],
                      encoded: Array(encoded.bytes[encoded.range($0)]))
        }
    }
}
