/// Plays per (subject, hour, waveform bucket, client, country) and comments per (track, hour,
/// waveform bucket), gathered in memory next to `HourCounts` by the batch job and the realtime
/// consumer, and turned into one `EncodedRows` row per (subject, hour) when handed to a store.
///
/// Adding a play appends one 24-byte record (client and country interned to small numbers
/// first) — sequential writes, where a hash table would take a cache miss per play — and the
/// records are sorted and summed once, when the rows are taken. Memory follows the plays
/// between two `removeAll`s: one flush interval, or one batch work unit.
public struct DimensionCounts: Sendable {
    struct Record: KeyHourRecord {
        var id: Int64
        var hour: Int64
        /// A play: bucket (7 bits, 127 = none) | client id << 7 (28 bits) | country id << 35 (28 bits).
        /// A comment (`commentFlag` set): bucket | `deletionFlag` for a deleted one.
        /// A creator's event by track (`byTrackFlags` set): track id (53 bits) | signal ordinal << 53
        /// | `retractionFlag` for a weight of −1.
        var combination: UInt64
    }

    static let noBucket: UInt64 = 127
    static let noValue: UInt64 = (1 << 28) - 1
    /// The bit a play's combination never sets (its fields take 63), marking a comment's record.
    static let commentFlag: UInt64 = 1 << 63
    static let deletionFlag: UInt64 = 1 << 7
    /// A comment's record never sets bit 62 (its fields take 8 bits): both set mark a by-track record.
    static let byTrackFlags: UInt64 = 1 << 63 | 1 << 62
    static let retractionFlag: UInt64 = 1 << 56
    static let trackIDMask: UInt64 = (1 << 53) - 1

    private var records: [Record] = []
    /// The radix sort's second buffer, kept between calls.
    private var sortBuffer: [Record] = []
    private var values = ValueInterner()

    public init(minimumCapacity: Int = 1024) {
        records.reserveCapacity(minimumCapacity)
    }

    public var isEmpty: Bool { records.isEmpty }

    /// Adds one play (ids must be ≥ 1).
    @inline(__always)
    public mutating func add(id: Int64, hour: Hour, _ dimensions: PlayDimensions) {
        precondition(id >= 1, "ids start at 1")
        let bucket = dimensions.waveformBucket.map { UInt64(UInt8(bitPattern: $0)) } ?? Self.noBucket
        let client = dimensions.client.map { values.id(of: $0) } ?? Self.noValue
        let country = dimensions.country.map { values.id(of: $0) } ?? Self.noValue
        // A play with none of the three adds nothing: the answers derive it from the plays.
        if bucket == Self.noBucket && client == Self.noValue && country == Self.noValue { return }
        records.append(Record(id: id, hour: hour.index, combination: bucket | client << 7 | country << 35))
    }

    /// Adds a comment at `waveformBucket` (`weight` 1), or takes one back for a deleted one (−1).
    @inline(__always)
    public mutating func addComment(id: Int64, hour: Hour, waveformBucket: Int8, weight: Int64) {
        precondition(id >= 1, "ids start at 1")
        let deletion = weight < 0 ? Self.deletionFlag : 0
        records.append(Record(id: id, hour: hour.index,
                              combination: Self.commentFlag | deletion | UInt64(UInt8(bitPattern: waveformBucket))))
    }

    /// Adds an event of `track` to the counts by track of the subject `id` (a creator's, SPEC
    /// §11): `weight` (1 or −1) in `signal`.
    @inline(__always)
    public mutating func addTrack(_ track: Int64, to id: Int64, hour: Hour, signal: Signal, weight: Int64) {
        precondition(id >= 1 && track >= 1 && UInt64(track) <= Self.trackIDMask, "ids are between 1 and 2^53 − 1")
        let retraction = weight < 0 ? Self.retractionFlag : 0
        records.append(Record(id: id, hour: hour.index,
                              combination: Self.byTrackFlags | retraction | UInt64(signal.ordinal) << 53 | UInt64(track)))
    }

    /// Forgets every play and comment, keeping the memory (e.g. after a flush).
    public mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
        values.removeAll()
    }

    /// Counts one play of value `id` (`noValue`: none) in the section whose counters start at
    /// `section` (`counts[section + rank]`), noting the value's rank in `touched` (from
    /// `section`) the first time the key meets it.
    @inline(__always)
    private static func tally(_ id: UInt64, section: Int, rankOfID: [Int], counts: inout [Int64],
                              touched: inout [Int], touchedCount: inout Int) {
        guard id != noValue else { return }
        let rank = rankOfID[Int(id)]
        if counts[section + rank] == 0 {
            touched[section + touchedCount] = rank
            touchedCount += 1
        }
        counts[section + rank] += 1
    }

    /// Calls `body` with each bucket set in `mask`, ascending.
    @inline(__always)
    private static func forEachBucket(_ mask: (low: UInt64, high: UInt64), _ body: (Int) -> Void) {
        for half in 0..<2 {
            var bits = half == 0 ? mask.low : mask.high
            while bits != 0 {
                body(half * 64 + bits.trailingZeroBitCount)
                bits &= bits - 1
            }
        }
    }

    /// Appends the by-track sections of one key's records (summed per (signal, track), those that
    /// net 0 left out) after its comments' section, every signal's section up to the last one
    /// holding an entry; `keepUpTo` moves past it. A record is `(signal << 53 | track) << 1 |
    /// retraction`: one word, so that they sort as plain integers.
    private static func appendByTrack(_ records: inout [UInt64], to encoded: inout [UInt8], keepUpTo: inout Int) {
        records.sortFew(in: records.indices)
        var next = 0
        for signal in Signal.allCases {
            let countAt = encoded.count
            encoded.append(0)
            var written: UInt64 = 0
            while next < records.count, Int(records[next] >> 54) == signal.ordinal {
                let key = records[next] >> 1
                var count: Int64 = 0
                while next < records.count, records[next] >> 1 == key {
                    count += records[next] & 1 == 0 ? 1 : -1
                    next += 1
                }
                guard count != 0 else { continue }
                encoded.append(8)
                withUnsafeBytes(of: (key & trackIDMask).bigEndian) { encoded.append(contentsOf: $0) }
                DimensionEncoding.appendVarint(DimensionEncoding.zigzag(count), to: &encoded)
                written += 1
            }
            DimensionEncoding.setCount(written, at: countAt, in: &encoded)
            if written > 0 { keepUpTo = encoded.count }
        }
    }

    /// Appends one row per (subject, hour), in `keyOrder`, to `out`.
    ///
    /// One sweep over the sorted records: a key's plays are summed into flat per-value counters
    /// (countries, then clients, indexed by each value's rank in byte order) and its comments
    /// into their buckets, and written out as the key ends, each value from its stored form made
    /// once per call.
    public mutating func encodeRows(_ keyOrder: KeyOrder, into out: inout EncodedRows) {
        KeyHourSort.sort(&records, buffer: &sortBuffer, order: keyOrder)
        // Each value's place in byte order and stored form (length byte, bytes), worked out once.
        let order = values.sortedIDs()
        let valueCount = order.count
        var rankOfID = [Int](repeating: 0, count: valueCount)
        var stored: [UInt8] = []
        // Value `rank` is `stored[storedStarts[rank]..<storedStarts[rank + 1]]`.
        var storedStarts = [0]
        for (rank, id) in order.enumerated() {
            rankOfID[id] = rank
            values[UInt64(id)].withBytes { bytes in
                stored.append(UInt8(bytes.count))
                stored.append(contentsOf: bytes)
            }
            storedStarts.append(stored.count)
        }

        var waveform = [Int64](repeating: 0, count: WaveformBucket.count)
        var commentsWaveform = [Int64](repeating: 0, count: WaveformBucket.count)
        /// A key's by-track records (`appendByTrack`).
        var byTrack: [UInt64] = []
        // Section 0 is countries, 1 clients (their order in the blob): counts[section * valueCount + rank].
        var counts = [Int64](repeating: 0, count: 2 * valueCount)
        var touched = [Int](repeating: 0, count: 2 * valueCount)
        let noBucket = Int(Self.noBucket)
        records.withUnsafeBufferPointer { records in
            var start = 0
            while start < records.count {
                let id = records[start].id, hour = records[start].hour
                var end = start
                var buckets = (low: UInt64(0), high: UInt64(0))
                var commentBuckets = (low: UInt64(0), high: UInt64(0))
                var touchedCount = (0, 0)
                byTrack.removeAll(keepingCapacity: true)
                while end < records.count && records[end].id == id && records[end].hour == hour {
                    let combination = records[end].combination
                    let bucket = Int(combination & 127)
                    if combination & Self.byTrackFlags == Self.byTrackFlags {
                        // (signal, track) as one sortable key, and whether it takes one back.
                        byTrack.append((combination & (7 << 53 | Self.trackIDMask)) << 1 | (combination & Self.retractionFlag != 0 ? 1 : 0))
                        end += 1
                        continue
                    }
                    if combination & Self.commentFlag != 0 {
                        commentsWaveform[bucket] += combination & Self.deletionFlag != 0 ? -1 : 1
                        if bucket < 64 { commentBuckets.low |= 1 << UInt64(bucket) } else { commentBuckets.high |= 1 << UInt64(bucket - 64) }
                        end += 1
                        continue
                    }
                    if bucket != noBucket {
                        waveform[bucket] += 1
                        if bucket < 64 { buckets.low |= 1 << UInt64(bucket) } else { buckets.high |= 1 << UInt64(bucket - 64) }
                    }
                    Self.tally(combination >> 35 & Self.noValue, section: 0, rankOfID: rankOfID,
                               counts: &counts, touched: &touched, touchedCount: &touchedCount.0)
                    Self.tally(combination >> 7 & Self.noValue, section: valueCount, rankOfID: rankOfID,
                               counts: &counts, touched: &touched, touchedCount: &touchedCount.1)
                    end += 1
                }
                out.appendRow(id: id, hour: hour, value: 0) { encoded in
                    let rowStart = encoded.count
                    encoded.append(UInt8(buckets.low.nonzeroBitCount + buckets.high.nonzeroBitCount))
                    for half in 0..<2 {
                        var bits = half == 0 ? buckets.low : buckets.high
                        while bits != 0 {
                            let bucket = half * 64 + bits.trailingZeroBitCount
                            bits &= bits - 1
                            encoded.append(UInt8(bucket))
                            DimensionEncoding.appendVarint(DimensionEncoding.zigzag(waveform[bucket]), to: &encoded)
                            waveform[bucket] = 0
                        }
                    }
                    for section in 0..<2 {
                        let base = section * valueCount
                        let count = section == 0 ? touchedCount.0 : touchedCount.1
                        touched.sortFew(in: base..<base + count)
                        DimensionEncoding.appendVarint(UInt64(count), to: &encoded)
                        for index in base..<base + count {
                            let rank = touched[index]
                            encoded.append(contentsOf: stored[storedStarts[rank]..<storedStarts[rank + 1]])
                            DimensionEncoding.appendVarint(DimensionEncoding.zigzag(counts[base + rank]), to: &encoded)
                            counts[base + rank] = 0
                        }
                    }
                    // Comments' buckets, those that did not net 0; the section only when it or a
                    // section after it holds an entry.
                    var keepUpTo = encoded.count
                    var commentEntries: UInt64 = 0
                    Self.forEachBucket(commentBuckets) { if commentsWaveform[$0] != 0 { commentEntries += 1 } }
                    // A track's plays alone (the common case): nothing after the first three sections.
                    if commentEntries == 0 && byTrack.isEmpty {
                        if encoded.count - rowStart == DimensionEncoding.Section.alwaysWritten { encoded.removeSubrange(rowStart...) }
                        return
                    }
                    DimensionEncoding.appendVarint(commentEntries, to: &encoded)
                    Self.forEachBucket(commentBuckets) { bucket in
                        guard commentsWaveform[bucket] != 0 else { return }
                        encoded.append(UInt8(bucket))
                        DimensionEncoding.appendVarint(DimensionEncoding.zigzag(commentsWaveform[bucket]), to: &encoded)
                        commentsWaveform[bucket] = 0
                    }
                    if commentEntries > 0 { keepUpTo = encoded.count }
                    if !byTrack.isEmpty { Self.appendByTrack(&byTrack, to: &encoded, keepUpTo: &keepUpTo) }
                    encoded.removeSubrange(keepUpTo...)
                    // Nothing in any section: the empty blob, not three zero counts.
                    if encoded.count - rowStart == DimensionEncoding.Section.alwaysWritten { encoded.removeSubrange(rowStart...) }
                }
                start = end
            }
        }
    }
}

/// Small numbers for the client and country values seen since the last `removeAll`: a few
/// dozen in real traffic, so the table stays tiny and lookups hit the cache.
struct ValueInterner: Sendable {
    private var values: [DimensionValue] = []
    /// Open addressing: id + 1, 0 = empty.
    private var table = [UInt32](repeating: 0, count: 64)

    @inline(__always)
    mutating func id(of value: DimensionValue) -> UInt64 {
        let mask = table.count - 1
        var index = Int(truncatingIfNeeded: value.hashWord) & mask
        while table[index] != 0 {
            let id = Int(table[index] - 1)
            if values[id] == value { return UInt64(id) }
            index = (index + 1) & mask
        }
        precondition(UInt64(values.count) < DimensionCounts.noValue, "too many distinct client and country values")
        values.append(value)
        table[index] = UInt32(values.count)
        if values.count * 2 > table.count { rehash() }
        return UInt64(values.count - 1)
    }

    subscript(id: UInt64) -> DimensionValue { values[Int(id)] }

    /// The ids in ascending byte order of their values.
    func sortedIDs() -> [Int] {
        values.indices.sorted { values[$0] < values[$1] }
    }

    mutating func removeAll() {
        guard !values.isEmpty else { return }
        values.removeAll(keepingCapacity: true)
        for index in table.indices { table[index] = 0 }
    }

    private mutating func rehash() {
        table = [UInt32](repeating: 0, count: table.count * 2)
        let mask = table.count - 1
        for (id, value) in values.enumerated() {
            var index = Int(truncatingIfNeeded: value.hashWord) & mask
            while table[index] != 0 { index = (index + 1) & mask }
            table[index] = UInt32(id + 1)
        }
    }
}
