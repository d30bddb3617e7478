import CounterpointCore

/// What every counter write of both backends carries — `CountRow`s with their blobs
/// (`EncodedRow`s), by column, for one `CounterTable`: rows keyed by two bigint
/// columns (a `CounterTable`'s keys), each with every signal's count (`SignalCounts`, one column
/// per signal) and the optional payloads of its plays — the dimension
/// counts (`DimensionEncoding` blobs) and the listeners (the plays that carried a listener id,
/// and their `HyperLogLog` sketch). Rows are appended in ascending key order; a row of the last
/// row's key adds its counts and merges its payloads into it, so the rows a dialect receives are
/// summed and sorted.
///
/// A payload is a `BlobColumn` with its merge rule (`Payload`): counts merge by adding (and can
/// be subtracted), sketches by union (and cannot: `BatchReplacement` rebuilds them).
public struct CounterRows: Sendable {
    let table: CounterTable
    /// Set for a rebuild of rollup sketches: the dialect replaces each row's stored sketch with
    /// the row's instead of uniting them.
    let replacesListeners: Bool
    private(set) var firstKeys: [Int64] = []
    private(set) var secondKeys: [Int64] = []
    private(set) var counts = SignalColumns()
    private(set) var listenerPlays: [Int64] = []
    private(set) var dimensions = BlobColumn(.dimensions)
    private(set) var listeners = BlobColumn(.listeners)

    init(_ table: CounterTable, replacesListeners: Bool = false) {
        self.table = table
        self.replacesListeners = replacesListeners
    }

    var count: Int { firstKeys.count }
    var isEmpty: Bool { firstKeys.isEmpty }
    var indices: Range<Int> { firstKeys.indices }

    func subject(_ row: Int) -> Subject { Subject(table.subject, table.idKey == 0 ? firstKeys[row] : secondKeys[row]) }

    /// Whether the row holds anything to write.
    func hasContent(_ row: Int) -> Bool {
        !counts[row].isZero || listenerPlays[row] != 0 || !dimensions.isEmpty(row) || !listeners.isEmpty(row) || replacesListeners
    }

    /// Whether the row carries a blob (the dialects merge those under locks or SQL functions).
    func hasBlob(_ row: Int) -> Bool { !dimensions.isEmpty(row) || !listeners.isEmpty(row) || replacesListeners }

    mutating func reserveCapacity(_ rows: Int) {
        firstKeys.reserveCapacity(rows)
        secondKeys.reserveCapacity(rows)
        counts.reserveCapacity(rows)
        listenerPlays.reserveCapacity(rows)
        dimensions.reserveCapacity(rows)
        listeners.reserveCapacity(rows)
    }

    static var noBlob: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    /// Adds `sign` × the row; rows must come in ascending key order. A row of the last row's key
    /// adds to it. Throws `malformedDimensions` or `malformedListeners` for a blob that cannot be
    /// read, and for a sketch with `sign` −1 (a union cannot be subtracted).
    mutating func append(_ first: Int64, _ second: Int64, plays: Int64, dimensions blob: UnsafeRawBufferPointer,
                         listenerPlays rowListenerPlays: Int64 = 0, listeners sketch: UnsafeRawBufferPointer = noBlob,
                         sign: Int64 = 1) throws {
        try append(first, second, counts: SignalCounts(plays: plays), dimensions: blob, listenerPlays: rowListenerPlays,
                   listeners: sketch, sign: sign)
    }

    /// `append` with every signal's count.
    mutating func append(_ first: Int64, _ second: Int64, counts rowCounts: SignalCounts, dimensions blob: UnsafeRawBufferPointer,
                         listenerPlays rowListenerPlays: Int64 = 0, listeners sketch: UnsafeRawBufferPointer = noBlob,
                         sign: Int64 = 1) throws {
        if let last = firstKeys.indices.last, firstKeys[last] == first, secondKeys[last] == second {
            counts.addToLast(rowCounts, sign: sign)
            listenerPlays[last] += sign * rowListenerPlays
            guard try dimensions.mergeIntoLast(blob, sign: sign) else {
                throw CounterStoreError.malformedDimensions(subject(last))
            }
            guard try listeners.mergeIntoLast(sketch, sign: sign) else {
                throw CounterStoreError.malformedListeners(subject(last))
            }
        } else {
            precondition(firstKeys.last.map { ($0, secondKeys.last!) < (first, second) } ?? true,
                         "CounterRows: rows out of key order")
            firstKeys.append(first)
            secondKeys.append(second)
            var signed = SignalCounts()
            signed.add(rowCounts, sign: sign)
            counts.append(signed)
            listenerPlays.append(sign * rowListenerPlays)
            guard dimensions.append(blob, sign: sign) else {
                throw CounterStoreError.malformedDimensions(subject(firstKeys.count - 1))
            }
            guard listeners.append(sketch, sign: sign) else {
                throw CounterStoreError.malformedListeners(subject(firstKeys.count - 1))
            }
        }
    }

    mutating func removeAll() {
        firstKeys.removeAll(keepingCapacity: true)
        secondKeys.removeAll(keepingCapacity: true)
        counts.removeAll()
        listenerPlays.removeAll(keepingCapacity: true)
        dimensions.removeAll()
        listeners.removeAll()
    }

    /// These rows (keyed (track, hour), or (track, day) for months) summed per (track, bucket) of
    /// the coarser `level`: in key order each bucket is a run of consecutive rows, so this costs
    /// one addition and at most one merge of each payload per row, and no lookups. A bucket's
    /// sketches are united decoded and encoded once per bucket (`BucketSketch`). How both
    /// backends keep the day and month rollups; months are rolled up from days, which are
    /// fewer than the hours they sum.
    func rolledUp(to level: RollupLevel) throws -> CounterRows {
        guard let source = table.level, level > source else { preconditionFailure("CounterRows: batch rows roll up to a coarser level only") }
        var rows = CounterRows(Catalogue.batch(level, table.subject))
        var bucket = BucketSketch()
        var encoded: [UInt8] = []
        try dimensions.withBlobs { blob in
            // A bucket's dimension blobs, merged once when it ends (`DimensionEncoding.mergeAll`):
            // merging each into the running sum cost the sum's size per row, which a creator's
            // counts by track make large.
            var bucketBlobs: [UnsafeRawBufferPointer] = []
            func endBucket() throws {
                guard let last = rows.indices.last else { return }
                guard bucket.finish(into: &encoded) else { throw CounterStoreError.malformedListeners(rows.subject(last)) }
                rows.listeners.setLast(encoded)
                guard DimensionEncoding.mergeAll(bucketBlobs, into: &encoded) else {
                    throw CounterStoreError.malformedDimensions(rows.subject(last))
                }
                rows.dimensions.setLast(encoded)
                bucketBlobs.removeAll(keepingCapacity: true)
            }
            try listeners.withBlobs { sketch in
                for row in indices {
                    let key = level.key(of: source.firstHour(ofKey: secondKeys[row]))
                    if let last = rows.indices.last, rows.firstKeys[last] != firstKeys[row] || rows.secondKeys[last] != key {
                        try endBucket()
                    }
                    try rows.append(firstKeys[row], key, counts: counts[row], dimensions: CounterRows.noBlob, listenerPlays: listenerPlays[row])
                    if !blob(row).isEmpty { bucketBlobs.append(blob(row)) }
                    bucket.add(sketch(row))
                }
            }
            try endBucket()
        }
        return rows
    }
}
