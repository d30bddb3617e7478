import CounterpointCore

/// The one row type every counter write of both backends carries: rows keyed by two bigint
/// columns (a `CounterTable`'s keys), each with plays and its optional payloads — the dimension
/// counts (`DimensionEncoding` blobs) and the listeners (the plays that carried a listener id,
/// and their `HyperLogLog` sketch). Rows are appended in ascending key order; a row of the last
/// row's key adds its plays and merges its payloads into it, so the rows a dialect receives are
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
    private(set) var plays: [Int64] = []
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

    func trackID(_ row: Int) -> Int64 { table.trackKey == 0 ? firstKeys[row] : secondKeys[row] }

    /// Whether the row holds anything to write.
    func hasContent(_ row: Int) -> Bool {
        plays[row] != 0 || listenerPlays[row] != 0 || !dimensions.isEmpty(row) || !listeners.isEmpty(row) || replacesListeners
    }

    /// Whether the row carries a blob (the dialects merge those under locks or SQL functions).
    func hasBlob(_ row: Int) -> Bool { !dimensions.isEmpty(row) || !listeners.isEmpty(row) || replacesListeners }

    mutating func reserveCapacity(_ rows: Int) {
        firstKeys.reserveCapacity(rows)
        secondKeys.reserveCapacity(rows)
        plays.reserveCapacity(rows)
        listenerPlays.reserveCapacity(rows)
        dimensions.reserveCapacity(rows)
        listeners.reserveCapacity(rows)
    }

    static var noBlob: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    /// Adds `sign` × the row; rows must come in ascending key order. A row of the last row's key
    /// adds to it. Throws `malformedDimensions` or `malformedListeners` for a blob that cannot be
    /// read, and for a sketch with `sign` −1 (a union cannot be subtracted).
    mutating func append(_ first: Int64, _ second: Int64, plays rowPlays: Int64, dimensions blob: UnsafeRawBufferPointer,
                         listenerPlays rowListenerPlays: Int64 = 0, listeners sketch: UnsafeRawBufferPointer = noBlob,
                         sign: Int64 = 1) throws {
        if let last = firstKeys.indices.last, firstKeys[last] == first, secondKeys[last] == second {
            plays[last] += sign * rowPlays
            listenerPlays[last] += sign * rowListenerPlays
            guard try dimensions.mergeIntoLast(blob, sign: sign) else {
                throw CounterStoreError.malformedDimensions(trackID: trackID(last))
            }
            guard try listeners.mergeIntoLast(sketch, sign: sign) else {
                throw CounterStoreError.malformedListeners(trackID: trackID(last))
            }
        } else {
            precondition(firstKeys.last.map { ($0, secondKeys.last!) < (first, second) } ?? true,
                         "CounterRows: rows out of key order")
            firstKeys.append(first)
            secondKeys.append(second)
            plays.append(sign * rowPlays)
            listenerPlays.append(sign * rowListenerPlays)
            guard dimensions.append(blob, sign: sign) else {
                throw CounterStoreError.malformedDimensions(trackID: trackID(firstKeys.count - 1))
            }
            guard listeners.append(sketch, sign: sign) else {
                throw CounterStoreError.malformedListeners(trackID: trackID(firstKeys.count - 1))
            }
        }
    }

    mutating func removeAll() {
        firstKeys.removeAll(keepingCapacity: true)
        secondKeys.removeAll(keepingCapacity: true)
        plays.removeAll(keepingCapacity: true)
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
        var rows = CounterRows(Catalogue.batch(level))
        var bucket = BucketSketch()
        var encoded: [UInt8] = []
        func endBucket() throws {
            guard let last = rows.indices.last else { return }
            guard bucket.finish(into: &encoded) else { throw CounterStoreError.malformedListeners(trackID: rows.trackID(last)) }
            rows.listeners.setLast(encoded)
        }
        try dimensions.withBlobs { blob in
            try listeners.withBlobs { sketch in
                for row in indices {
                    let key = level.key(of: source.firstHour(ofKey: secondKeys[row]))
                    if let last = rows.indices.last, rows.firstKeys[last] != firstKeys[row] || rows.secondKeys[last] != key {
                        try endBucket()
                    }
                    try rows.append(firstKeys[row], key, plays: plays[row], dimensions: blob(row), listenerPlays: listenerPlays[row])
                    bucket.add(sketch(row))
                }
            }
        }
        try endBucket()
        return rows
    }
}

/// The stored sketches of one rollup bucket, united as they come and written once: a bucket of
/// many hours costs one decode per sketch and one encode, where uniting stored bytes pairwise
/// would decode, unite and encode the growing union once per hour. A bucket of one sketch keeps
/// its bytes as they are (as a pairwise union with nothing does), so the bytes are the same.
struct BucketSketch {
    private var first: [UInt8] = []
    private var union: HyperLogLog?
    private var malformed = false

    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, !malformed else { return }
        guard !first.isEmpty else {
            first.append(contentsOf: bytes)
            return
        }
        do {
            if union == nil { union = try HyperLogLog(decoding: first) }
            try union!.formUnion(HyperLogLog(decoding: bytes))
        } catch {
            malformed = true
        }
    }

    /// Writes the bucket's union into `out` (empty when it held no sketch) and starts the next
    /// bucket; false when a sketch did not decode or their parameters differ.
    mutating func finish(into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        let united = !malformed
        if united {
            if let union { union.encode(into: &out) } else { out.append(contentsOf: first) }
        }
        first.removeAll(keepingCapacity: true)
        union = nil
        malformed = false
        return united
    }
}

/// A payload of counter rows: its column and how two values merge.
enum Payload: Sendable {
    /// `DimensionEncoding` blobs, merged entry-wise (`a + sign × b`).
    case dimensions
    /// `HyperLogLog` sketches, merged by union; never subtracted.
    case listeners

    var column: String {
        switch self {
        case .dimensions: "dimensions"
        case .listeners: "listeners"
        }
    }
}

/// An optional blob per row, back to back in one buffer (no array per row). An empty blob is
/// "none", which the dialects store as NULL.
struct BlobColumn: Sendable {
    let payload: Payload
    private var arena: [UInt8] = []
    private var ranges: [Range<Int>] = []
    private var scratch: [UInt8] = []

    init(_ payload: Payload) { self.payload = payload }

    mutating func reserveCapacity(_ rows: Int) { ranges.reserveCapacity(rows) }

    func isEmpty(_ row: Int) -> Bool { ranges[row].isEmpty }

    /// Calls `body` with a function that gives each row's blob, valid inside `body` only.
    func withBlobs<T>(_ body: ((Int) -> UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try arena.withUnsafeBytes { arena in
            try body { UnsafeRawBufferPointer(rebasing: arena[ranges[$0]]) }
        }
    }

    /// Appends a row's blob (negated for `sign` −1); false when the blob is malformed.
    mutating func append(_ blob: UnsafeRawBufferPointer, sign: Int64) -> Bool {
        let start = arena.count
        if sign == 1 || blob.isEmpty {
            arena.append(contentsOf: blob)
        } else {
            guard BlobMerge.merge(payload, CounterRows.noBlob, blob, sign: sign, into: &scratch) else { return false }
            arena.append(contentsOf: scratch)
        }
        ranges.append(start..<arena.count)
        return true
    }

    /// Merges `sign` × `blob` into the last row's blob (the arena's tail); false when malformed.
    mutating func mergeIntoLast(_ blob: UnsafeRawBufferPointer, sign: Int64) throws -> Bool {
        guard !blob.isEmpty, let range = ranges.last else { return true }
        let ok = arena.withUnsafeBytes { arena in
            BlobMerge.merge(payload, UnsafeRawBufferPointer(rebasing: arena[range]), blob, sign: sign, into: &scratch)
        }
        guard ok else { return false }
        arena.removeSubrange(range.lowerBound...)
        arena.append(contentsOf: scratch)
        ranges[ranges.count - 1] = range.lowerBound..<arena.count
        return true
    }

    /// Sets the last row's blob, which must be empty (and so the arena's tail).
    mutating func setLast(_ blob: [UInt8]) {
        guard let range = ranges.last else { preconditionFailure("BlobColumn: no row") }
        precondition(range.isEmpty && range.lowerBound == arena.count, "BlobColumn: the last row already has a blob")
        arena.append(contentsOf: blob)
        ranges[ranges.count - 1] = range.lowerBound..<arena.count
    }

    mutating func removeAll() {
        arena.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
    }
}

/// The one blob merge of the store: `a + sign × b` for dimension counts
/// (`DimensionEncoding.merge`), `a ∪ b` for listener sketches; and a running sum that merges
/// blob after blob into one (for readers).
enum BlobMerge {
    static func merge(_ payload: Payload, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, sign: Int64 = 1,
                      into out: inout [UInt8]) -> Bool {
        switch payload {
        case .dimensions:
            return DimensionEncoding.merge(a, b, sign: sign, into: &out)
        case .listeners:
            guard sign == 1 else { return false }
            return unite(a, b, into: &out)
        }
    }

    /// The union of two stored sketches (an empty blob is none); false when either does not
    /// decode or their parameters differ.
    static func unite(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        if a.isEmpty || b.isEmpty {
            out.append(contentsOf: a.isEmpty ? b : a)
            return true
        }
        do {
            try HyperLogLog.unite(encoded: a, b, into: &out)
            return true
        } catch {
            return false
        }
    }
}

/// Stored sketches united one after another, with the plays that carried their listeners.
struct SketchUnion {
    let trackID: Int64
    private(set) var sketch = HyperLogLog()
    private(set) var listenerPlays: Int64 = 0

    init(trackID: Int64) { self.trackID = trackID }

    var listeners: Int64 { Int64(sketch.cardinality.rounded()) }

    mutating func add(_ plays: Int64, _ bytes: UnsafeRawBufferPointer) throws {
        listenerPlays &+= plays
        guard !bytes.isEmpty else { return }
        do {
            try sketch.formUnion(HyperLogLog(decoding: bytes))
        } catch {
            throw CounterStoreError.malformedListeners(trackID: trackID)
        }
    }
}
