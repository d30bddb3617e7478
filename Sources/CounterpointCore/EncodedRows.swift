/// One (subject, hour)'s stored blob — its dimension counts (`DimensionEncoding`) or its
/// listeners' sketch (`HyperLogLog.encoded`, postgresql-hll's bytes) — with a number: the plays
/// that carried a listener for a sketch, 0 for dimension counts. A row of `EncodedRows` on its
/// own, where rows are handed over one array each (a copy between stores, tests).
public struct EncodedRow: Hashable, Sendable {
    public var id: Int64
    public var hour: Hour
    public var value: Int64
    public var encoded: [UInt8]

    public init(id: Int64, hour: Hour, value: Int64 = 0, encoded: [UInt8]) {
        self.id = id
        self.hour = hour
        self.value = value
        self.encoded = encoded
    }
}

/// Stored blobs (`EncodedRow`) of rows in one key order, their blobs back to back in one buffer:
/// how `DimensionCounts` and `ListenerCounts` hand a flush to the store without an array per row.
public struct EncodedRows: Sendable {
    public private(set) var ids: [Int64] = []
    public private(set) var hours: [Int64] = []
    public private(set) var values: [Int64] = []
    /// The blobs, back to back.
    public private(set) var bytes: [UInt8] = []
    /// Where each row's blob ends in `bytes` (it starts where the previous one ends).
    private var ends: [Int] = []

    public init() {}

    public var count: Int { ids.count }

    /// Where the row's blob lies in `bytes`.
    @inline(__always)
    public func range(_ row: Int) -> Range<Int> { (row == 0 ? 0 : ends[row - 1])..<ends[row] }

    /// Appends a row whose blob `write` appends to the buffer it is given (`bytes`).
    @inline(__always)
    mutating func appendRow(id: Int64, hour: Int64, value: Int64, _ write: (inout [UInt8]) -> Void) {
        write(&bytes)
        ids.append(id)
        hours.append(hour)
        values.append(value)
        ends.append(bytes.count)
    }

    /// Rows in the order given.
    public init(_ rows: some Sequence<EncodedRow>) {
        for row in rows { append(id: row.id, hour: row.hour.index, value: row.value, blob: row.encoded) }
    }

    /// Row `row` on its own (a copy of its blob).
    public subscript(row: Int) -> EncodedRow {
        EncodedRow(id: ids[row], hour: Hour(index: hours[row]), value: values[row], encoded: Array(bytes[range(row)]))
    }

    /// Appends a row with `blob` as it is.
    public mutating func append(id: Int64, hour: Int64, value: Int64, blob: [UInt8]) {
        appendRow(id: id, hour: hour, value: value) { $0.append(contentsOf: blob) }
    }

    /// Forgets every row, keeping the memory.
    public mutating func removeAll() {
        ids.removeAll(keepingCapacity: true)
        hours.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with a function that lends any row's blob, valid within `body`: no copy.
    public func withBlobs<Result>(_ body: (_ blob: (Int) -> UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes { all in
            try body { row in UnsafeRawBufferPointer(rebasing: all[range(row)]) }
        }
    }
}
