import CounterpointCore

// Rows as arrays, one value per (track, hour), for tests that compare or feed them one by one;
// the product itself hands them on as `EncodedRows`.

extension DimensionCounts {
    /// One row per (track, hour), ordered by track then hour.
    public mutating func rows() -> [EncodedRow] {
        var encoded = EncodedRows()
        encodeRows(.idThenHour, into: &encoded)
        return (0..<encoded.count).map { encoded[$0] }
    }
}

extension ListenerCounts {
    /// One row per (track, hour) with a listener, ordered by track then hour; its value is the
    /// plays that carried a listener.
    public mutating func rows() -> [EncodedRow] {
        var encoded = EncodedRows()
        encodeRows(.idThenHour, into: &encoded)
        return (0..<encoded.count).map { encoded[$0] }
    }
}
