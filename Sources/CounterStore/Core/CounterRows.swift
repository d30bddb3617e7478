import CounterpointCore

/// The one row type every counter write of both backends carries: rows keyed by two bigint
/// columns (a `CounterTable`'s keys), each with plays and its optional payloads — the dimension
/// counts (`DimensionEncoding` blobs) today. Rows are appended in ascending key order; a row of
/// the last row's key adds its plays and merges its payloads into it, so the rows a dialect
/// receives are summed and sorted.
///
/// A payload is a `BlobColumn` with its merge rule: adding one (a listener sketch) is one more
/// column here, one more argument to `append`, and its column in the dialects' statements.
struct CounterRows {
    let table: CounterTable
    private(set) var firstKeys: [Int64] = []
    private(set) var secondKeys: [Int64] = []
    private(set) var plays: [Int64] = []
    private(set) var dimensions = BlobColumn()

    init(_ table: CounterTable) { self.table = table }

    var count: Int { firstKeys.count }
    var isEmpty: Bool { firstKeys.isEmpty }
    var indices: Range<Int> { firstKeys.indices }

    func trackID(_ row: Int) -> Int64 { table.trackKey == 0 ? firstKeys[row] : secondKeys[row] }

    mutating func reserveCapacity(_ rows: Int) {
        firstKeys.reserveCapacity(rows)
        secondKeys.reserveCapacity(rows)
        plays.reserveCapacity(rows)
        dimensions.reserveCapacity(rows)
    }

    /// Adds `sign` × the row; rows must come in ascending key order. A row of the last row's key
    /// adds to it. Throws `malformedDimensions` for a blob `DimensionEncoding` cannot read.
    mutating func append(_ first: Int64, _ second: Int64, plays rowPlays: Int64, dimensions blob: UnsafeRawBufferPointer,
                         sign: Int64 = 1) throws {
        if let last = firstKeys.indices.last, firstKeys[last] == first, secondKeys[last] == second {
            plays[last] += sign * rowPlays
            guard try dimensions.mergeIntoLast(blob, sign: sign) else {
                throw CounterStoreError.malformedDimensions(trackID: trackID(last))
            }
        } else {
            precondition(firstKeys.last.map { ($0, secondKeys.last!) < (first, second) } ?? true,
                         "CounterRows: rows out of key order")
            firstKeys.append(first)
            secondKeys.append(second)
            plays.append(sign * rowPlays)
            guard dimensions.append(blob, sign: sign) else {
                throw CounterStoreError.malformedDimensions(trackID: trackID(firstKeys.count - 1))
            }
        }
    }

    mutating func removeAll() {
        firstKeys.removeAll(keepingCapacity: true)
        secondKeys.removeAll(keepingCapacity: true)
        plays.removeAll(keepingCapacity: true)
        dimensions.removeAll()
    }

    /// These rows (keyed (track, hour)) summed per (track, bucket) of `level`: in (track, hour)
    /// order each bucket is a run of consecutive rows, so this costs one addition and at most
    /// one blob merge per row, and no lookups. How both backends keep the day and month rollups.
    func rolledUp(to level: RollupLevel) throws -> CounterRows {
        precondition(table.level == .hour, "CounterRows: only hour rows roll up")
        var rows = CounterRows(Catalogue.batch(level))
        try dimensions.withBlobs { blob in
            for row in indices {
                try rows.append(firstKeys[row], level.key(of: Hour(index: secondKeys[row])), plays: plays[row], dimensions: blob(row))
            }
        }
        return rows
    }
}

/// An optional blob per row, back to back in one buffer (no array per row). An empty blob is
/// "none", which the dialects store as NULL.
struct BlobColumn {
    private var arena: [UInt8] = []
    private var ranges: [Range<Int>] = []
    private var scratch: [UInt8] = []

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
            guard BlobMerge.merge(UnsafeRawBufferPointer(start: nil, count: 0), blob, sign: sign, into: &scratch) else { return false }
            arena.append(contentsOf: scratch)
        }
        ranges.append(start..<arena.count)
        return true
    }

    /// Merges `sign` × `blob` into the last row's blob (the arena's tail); false when malformed.
    mutating func mergeIntoLast(_ blob: UnsafeRawBufferPointer, sign: Int64) throws -> Bool {
        guard !blob.isEmpty, let range = ranges.last else { return true }
        let ok = arena.withUnsafeBytes { arena in
            BlobMerge.merge(UnsafeRawBufferPointer(rebasing: arena[range]), blob, sign: sign, into: &scratch)
        }
        guard ok else { return false }
        arena.removeSubrange(range.lowerBound...)
        arena.append(contentsOf: scratch)
        ranges[ranges.count - 1] = range.lowerBound..<arena.count
        return true
    }

    mutating func removeAll() {
        arena.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
    }
}

/// The one blob merge of the store: `a + sign × b` (`DimensionEncoding.merge`), and a running
/// sum that merges blob after blob into one (for readers and rollups).
enum BlobMerge {
    static func merge(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, sign: Int64 = 1, into out: inout [UInt8]) -> Bool {
        DimensionEncoding.merge(a, b, sign: sign, into: &out)
    }

    /// Blobs merged one after another; `add` throws `malformedDimensions(trackID:)` for a blob
    /// that cannot be read.
    struct Sum {
        private(set) var value: [UInt8] = []
        private var scratch: [UInt8] = []
        let trackID: Int64

        init(trackID: Int64) { self.trackID = trackID }

        mutating func add(_ blob: UnsafeRawBufferPointer, sign: Int64 = 1) throws {
            guard !blob.isEmpty else { return }
            let ok = value.withUnsafeBytes { BlobMerge.merge($0, blob, sign: sign, into: &scratch) }
            guard ok else { throw CounterStoreError.malformedDimensions(trackID: trackID) }
            swap(&value, &scratch)
        }
    }
}
