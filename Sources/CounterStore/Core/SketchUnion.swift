import CounterpointCore

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

/// Stored sketches united one after another, with the plays that carried their listeners.
struct SketchUnion {
    let subject: Subject
    private(set) var sketch = HyperLogLog()
    private(set) var listenerPlays: Int64 = 0

    init(_ subject: Subject) { self.subject = subject }

    var listeners: Int64 { Int64(sketch.cardinality.rounded()) }

    mutating func add(_ plays: Int64, _ bytes: UnsafeRawBufferPointer) throws {
        listenerPlays &+= plays
        guard !bytes.isEmpty else { return }
        do {
            try sketch.formUnion(HyperLogLog(decoding: bytes))
        } catch {
            throw CounterStoreError.malformedListeners(subject)
        }
    }
}
