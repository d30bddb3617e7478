/// The listener ids of plays per (subject, hour), gathered in memory next to `HourCounts` by the
/// batch job and the realtime consumer, and turned into one listener sketch per (subject, hour)
/// when handed to a store (docs/listeners.md).
///
/// Adding a play costs one hash (`hll_hash_bigint`) and one appended 24-byte record; the
/// records are sorted (`KeyHourSort`) and the sketches built once, when the rows are taken.
/// Memory follows the plays between two `removeAll`s: one flush interval, or one batch unit.
public struct ListenerCounts: Sendable {
    struct Record: KeyHourRecord {
        var id: Int64
        var hour: Int64
        var hash: Int64
    }

    private var records: [Record] = []
    private var sortBuffer: [Record] = []

    public init(minimumCapacity: Int = 1024) {
        records.reserveCapacity(minimumCapacity)
    }

    public var isEmpty: Bool { records.isEmpty }

    /// Adds the listener of one play (ids must be ≥ 1); a play without one adds nothing.
    @inline(__always)
    public mutating func add(id: Int64, hour: Hour, listenerID: Int64?) {
        guard let listenerID else { return }
        precondition(id >= 1, "ids start at 1")
        records.append(Record(id: id, hour: hour.index, hash: MurmurHash3.hashBigint(listenerID)))
    }

    /// Forgets every play, keeping the memory (e.g. after a flush).
    public mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
    }

    /// Appends one row per (subject, hour) with a listener, in `keyOrder`, to `out`: its sketch,
    /// and as its value the plays that carried a listener.
    public mutating func encodeRows(_ keyOrder: KeyOrder, into out: inout EncodedRows) {
        KeyHourSort.sort(&records, buffer: &sortBuffer, order: keyOrder)
        var hashes: [Int64] = []
        var start = 0
        while start < records.count {
            let id = records[start].id, hour = records[start].hour
            var end = start
            hashes.removeAll(keepingCapacity: true)
            while end < records.count && records[end].id == id && records[end].hour == hour {
                hashes.append(records[end].hash)
                end += 1
            }
            // In ascending order each hash lands at the end of an explicit sketch.
            hashes.sortFew(in: 0..<hashes.count)
            out.appendRow(id: id, hour: hour, value: Int64(end - start)) { bytes in
                HyperLogLog.appendEncoded(sortedHashes: hashes, parameters: .listeners, to: &bytes)
            }
            start = end
        }
    }
}
