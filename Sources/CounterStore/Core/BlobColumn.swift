import CounterpointCore

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
