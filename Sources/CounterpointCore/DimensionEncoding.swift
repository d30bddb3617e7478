/// The compact form of one (track, hour)'s — or one rollup bucket's — dimension counts, as both
/// layers store it: one blob per key instead of a row per (key, bucket) or (key, country),
/// which would multiply the rows of the store (docs/architecture.md's size budget).
///
/// Layout: sections, each a varint entry count and its entries in ascending key order:
/// waveform buckets of plays `(bucket: 1 byte, count)`, then countries and clients
/// `(length: 1 byte, UTF-8 bytes, count)`, then — only when it holds an entry — the waveform
/// buckets of comments (SPEC §11), laid out as the plays' ones. Counts are zig-zag varints:
/// small counts take one byte, and the rollups' subtractions, like deleted comments, can carry
/// negative counts. Entries with count 0 are never written, so the empty blob (zero bytes) means
/// "no plays or comments with any dimension".
///
/// A creator's rows (SPEC §11) add, after it, one section per signal of the counts by track of
/// the events that named the creator — `(length: 1 byte = 8, the track id big-endian, count)`,
/// so that keys in byte order are ids in numeric order: what a creator's tracks ranked are
/// merged from, by the same merge rule, rollups and subtractions as every other count here.
///
/// The sections after the first three are optional: a blob ends after its last section that
/// holds an entry (an empty one before it is written as a zero count), so that blobs written
/// before they existed read and merge as they are, and blobs of plays alone — every track's —
/// keep their bytes: both stores hold them in the same column, with no migration, and
/// `copy-store` copies them unread.
///
/// Plays without position, client or country are not stored at all: they are the plays of the
/// key minus what its entries hold, so the answers derive them from the merged plays — which
/// also makes plays counted before dimensions were kept show as "without". Comments without a
/// position are derived the same way, from the merged comments.
public enum DimensionEncoding {
    /// The sections, in blob order.
    public enum Section: Int, CaseIterable, Sendable {
        case waveform, country, client
        /// Where on the waveform comments sit: written only when it or a later one has an entry.
        case commentsWaveform
        /// A creator's counts by track, one section per signal in `Signal.allCases` order.
        case playsByTrack, downloadsByTrack, likesByTrack, repostsByTrack, commentsByTrack

        /// Whether the section's keys are waveform buckets (rather than strings).
        var isWaveform: Bool { self == .waveform || self == .commentsWaveform }

        /// The signal whose counts by track the section holds, if it is one of those.
        var signalByTrack: Signal? {
            rawValue > Section.commentsWaveform.rawValue ? Signal.allCases[rawValue - Section.commentsWaveform.rawValue - 1] : nil
        }

        /// The section of `signal`'s counts by track.
        static func byTrack(_ signal: Signal) -> Section {
            Section(rawValue: commentsWaveform.rawValue + 1 + signal.ordinal)!
        }

        /// The sections every non-empty blob has; the others may be left off at its end.
        static let alwaysWritten = 3
    }

    /// A track id as the key of a by-track section: 8 bytes, big-endian.
    public static func trackKey(_ track: Int64) -> [UInt8] {
        withUnsafeBytes(of: UInt64(bitPattern: track).bigEndian) { Array($0) }
    }

    // MARK: Merging

    /// Writes `a + sign × b` into `out` (replacing its contents), entry by entry; entries that
    /// sum to 0 are left out. Returns false, leaving `out` unspecified, when either input is
    /// not a well-formed blob.
    public static func merge(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, sign: Int64 = 1,
                             into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        if a.isEmpty && b.isEmpty { return true }
        var left = Cursor(a)
        var right = Cursor(b)
        // The end of the last section to keep: the first three, and any after them up to the
        // last one holding an entry.
        var keepUpTo = 0
        for section in Section.allCases {
            // Neither blob holds a later section: the sum holds none either.
            if section.rawValue >= Section.alwaysWritten && left.isAtEnd && right.isAtEnd { break }
            guard let leftCount = left.sectionCount(section), let rightCount = right.sectionCount(section) else { return false }
            let countAt = out.count
            out.append(0) // one byte reserved for the entry count, widened below if needed
            var written: UInt64 = 0
            var leftRemaining = leftCount, rightRemaining = rightCount
            var leftEntry = leftRemaining > 0 ? left.entry(section) : nil
            var rightEntry = rightRemaining > 0 ? right.entry(section) : nil
            if leftRemaining > 0 && leftEntry == nil || rightRemaining > 0 && rightEntry == nil { return false }
            while leftRemaining > 0 || rightRemaining > 0 {
                let order: Int
                if leftRemaining == 0 { order = 1 } else if rightRemaining == 0 { order = -1 } else {
                    order = compareKeys(leftEntry!.key, rightEntry!.key)
                }
                let key = order <= 0 ? leftEntry!.key : rightEntry!.key
                var count: Int64 = 0
                if order <= 0 { count &+= leftEntry!.count }
                if order >= 0 { count &+= sign &* rightEntry!.count }
                if count != 0 {
                    appendKey(key, section, to: &out)
                    appendVarint(zigzag(count), to: &out)
                    written += 1
                }
                if order <= 0 {
                    leftRemaining -= 1
                    if leftRemaining > 0 {
                        guard let next = left.entry(section), compareKeys(next.key, key) > 0 else { return false }
                        leftEntry = next
                    }
                }
                if order >= 0 {
                    let previous = rightEntry!.key
                    rightRemaining -= 1
                    if rightRemaining > 0 {
                        guard let next = right.entry(section), compareKeys(next.key, previous) > 0 else { return false }
                        rightEntry = next
                    }
                }
            }
            setCount(written, at: countAt, in: &out)
            if written > 0 || section.rawValue < Section.alwaysWritten { keepUpTo = out.count }
        }
        guard left.isAtEnd, right.isAtEnd else { return false }
        out.removeSubrange(keepUpTo...)
        // Nothing left in any section: the empty blob, not three zero counts.
        if out.count == Section.alwaysWritten { out.removeAll(keepingCapacity: true) }
        return true
    }

    /// The sum of `blobs` into `out` (replacing its contents), merged pairwise in rounds — each
    /// round halves the blobs — so that a bucket of many rows costs the sum's size a round, not a
    /// row; false when a blob is not well formed.
    public static func mergeAll(_ blobs: [UnsafeRawBufferPointer], into out: inout [UInt8]) -> Bool {
        switch blobs.count {
        case 0:
            out.removeAll(keepingCapacity: true)
            return true
        case 1:
            // As it is, the way a single row's blob went in before (checked when it was read).
            out.removeAll(keepingCapacity: true)
            out.append(contentsOf: blobs[0])
            return true
        case 2:
            return merge(blobs[0], blobs[1], into: &out)
        default:
            var round: [[UInt8]] = []
            round.reserveCapacity((blobs.count + 1) / 2)
            for start in stride(from: 0, to: blobs.count, by: 2) {
                var merged: [UInt8] = []
                guard mergeAll(Array(blobs[start..<min(start + 2, blobs.count)]), into: &merged) else { return false }
                round.append(merged)
            }
            while round.count > 1 {
                var next: [[UInt8]] = []
                next.reserveCapacity((round.count + 1) / 2)
                for start in stride(from: 0, to: round.count, by: 2) {
                    guard start + 1 < round.count else {
                        next.append(round[start])
                        continue
                    }
                    var merged: [UInt8] = []
                    let ok = round[start].withUnsafeBytes { a in round[start + 1].withUnsafeBytes { b in merge(a, b, into: &merged) } }
                    guard ok else { return false }
                    next.append(merged)
                }
                round = next
            }
            out = round[0]
            return true
        }
    }

    /// `a + sign × b` as a new array; nil when an input is malformed.
    public static func merged(_ a: [UInt8], _ b: [UInt8], sign: Int64 = 1) -> [UInt8]? {
        var out: [UInt8] = []
        let ok = a.withUnsafeBytes { a in b.withUnsafeBytes { b in merge(a, b, sign: sign, into: &out) } }
        return ok ? out : nil
    }

    // MARK: Encoding and decoding

    /// Encodes entries already in ascending key order without duplicates; zero counts are skipped.
    public static func encode(waveform: some Sequence<(bucket: Int, count: Int64)>,
                              countries: some Sequence<(value: DimensionValue, count: Int64)>,
                              clients: some Sequence<(value: DimensionValue, count: Int64)>,
                              commentsWaveform: [(bucket: Int, count: Int64)] = [],
                              byTrack: [Signal: [(track: Int64, count: Int64)]] = [:],
                              into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        appendBuckets(waveform, to: &out)
        for values in [Array(countries), Array(clients)] {
            let countAt = out.count
            out.append(0)
            var written: UInt64 = 0
            for (value, count) in values where count != 0 {
                value.withBytes { bytes in
                    out.append(UInt8(bytes.count))
                    out.append(contentsOf: bytes)
                }
                appendVarint(zigzag(count), to: &out)
                written += 1
            }
            setCount(written, at: countAt, in: &out)
        }
        var keepUpTo = out.count
        appendBuckets(commentsWaveform, to: &out)
        if commentsWaveform.contains(where: { $0.count != 0 }) { keepUpTo = out.count }
        for signal in Signal.allCases {
            let entries = (byTrack[signal] ?? []).filter { $0.count != 0 }
            appendVarint(UInt64(entries.count), to: &out)
            for (track, count) in entries {
                out.append(8)
                out.append(contentsOf: trackKey(track))
                appendVarint(zigzag(count), to: &out)
            }
            if !entries.isEmpty { keepUpTo = out.count }
        }
        out.removeSubrange(keepUpTo...)
        if out.count == Section.alwaysWritten { out.removeAll(keepingCapacity: true) }
    }

    /// Appends a waveform section: its entry count, then its nonzero buckets.
    private static func appendBuckets(_ buckets: some Sequence<(bucket: Int, count: Int64)>, to out: inout [UInt8]) {
        let countAt = out.count
        out.append(0)
        var written: UInt64 = 0
        for (bucket, count) in buckets where count != 0 {
            out.append(UInt8(bucket))
            appendVarint(zigzag(count), to: &out)
            written += 1
        }
        setCount(written, at: countAt, in: &out)
    }

    /// The entries of a blob; nil when it is malformed.
    public static func decode(_ blob: UnsafeRawBufferPointer) -> DimensionTotals? {
        var totals = DimensionTotals()
        guard !blob.isEmpty else { return totals }
        var cursor = Cursor(blob)
        for section in Section.allCases {
            guard let count = cursor.sectionCount(section) else { return nil }
            var previous: Key?
            for _ in 0..<count {
                guard let entry = cursor.entry(section) else { return nil }
                if let previous, compareKeys(previous, entry.key) >= 0 { return nil }
                previous = entry.key
                switch entry.key {
                case .bucket(let bucket):
                    if section == .waveform { totals.waveform[bucket] = entry.count } else { totals.commentsWaveform[bucket] = entry.count }
                case .bytes(let bytes):
                    if let signal = section.signalByTrack {
                        guard bytes.count == 8 else { return nil }
                        let track = Int64(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)))
                        totals.byTrack[signal.ordinal].append((track, entry.count))
                        continue
                    }
                    let value = DimensionValue(copying: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: bytes.count)
                    if section == .country { totals.countries.append((value, entry.count)) } else { totals.clients.append((value, entry.count)) }
                }
            }
        }
        return cursor.isAtEnd ? totals : nil
    }

    public static func decode(_ blob: [UInt8]) -> DimensionTotals? {
        blob.withUnsafeBytes { decode($0) }
    }

    // MARK: Pieces

    enum Key {
        case bucket(Int)
        case bytes(UnsafeRawBufferPointer)
    }

    /// Buckets numerically, strings by their bytes (a prefix first).
    static func compareKeys(_ a: Key, _ b: Key) -> Int {
        switch (a, b) {
        case (.bucket(let x), .bucket(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.bytes(let x), .bytes(let y)):
            for index in 0..<min(x.count, y.count) where x[index] != y[index] {
                return x[index] < y[index] ? -1 : 1
            }
            return x.count < y.count ? -1 : x.count == y.count ? 0 : 1
        default: return 0
        }
    }

    static func appendKey(_ key: Key, _ section: Section, to out: inout [UInt8]) {
        switch key {
        case .bucket(let bucket): out.append(UInt8(bucket))
        case .bytes(let bytes):
            out.append(UInt8(bytes.count))
            out.append(contentsOf: bytes)
        }
    }

    @inline(__always)
    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    @inline(__always)
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }

    @inline(__always)
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    /// Fills the byte reserved at `index` with `count`, inserting bytes when it needs more than one.
    static func setCount(_ count: UInt64, at index: Int, in out: inout [UInt8]) {
        if count < 0x80 {
            out[index] = UInt8(count)
        } else {
            var varint: [UInt8] = []
            appendVarint(count, to: &varint)
            out.replaceSubrange(index...index, with: varint)
        }
    }

    /// Reads a blob front to back; every read checks the bounds.
    struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var isAtEnd: Bool { position == bytes.count }

        /// An empty blob reads as empty sections, and so does the end of a blob where only the
        /// sections that may be left off remain (a blob written before they existed).
        mutating func sectionCount(_ section: Section) -> UInt64? {
            bytes.isEmpty || section.rawValue >= Section.alwaysWritten && isAtEnd ? 0 : varint()
        }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < bytes.count, shift < 64 {
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        mutating func entry(_ section: Section) -> (key: Key, count: Int64)? {
            guard position < bytes.count else { return nil }
            let head = Int(bytes[position])
            position += 1
            let key: Key
            if section.isWaveform {
                guard head < WaveformBucket.count else { return nil }
                key = .bucket(head)
            } else {
                // A by-track key is a track id's 8 bytes; a value at most `DimensionValue.maxLength`.
                guard section.signalByTrack == nil ? head <= DimensionValue.maxLength : head == 8,
                      position + head <= bytes.count else { return nil }
                key = .bytes(UnsafeRawBufferPointer(rebasing: bytes[position..<position + head]))
                position += head
            }
            guard let count = varint() else { return nil }
            return (key, DimensionEncoding.unzigzag(count))
        }
    }
}

/// The decoded dimension counts of some plays: waveform buckets, and (value, plays) per
/// country and client in ascending byte order; and the waveform buckets of their comments.
/// Plays and comments without a value are not in it (see `DimensionEncoding`).
public struct DimensionTotals: Sendable, Equatable {
    public var waveform = [Int64](repeating: 0, count: WaveformBucket.count)
    public var countries: [(value: DimensionValue, plays: Int64)] = []
    public var clients: [(value: DimensionValue, plays: Int64)] = []
    /// Net comments per bucket: a bucket may be negative where deletions outnumber comments.
    public var commentsWaveform = [Int64](repeating: 0, count: WaveformBucket.count)
    /// A creator's: per signal (`Signal.ordinal`), the net count by track of the events that
    /// named it, ascending track ids, counts that are not 0.
    public var byTrack: [[(track: Int64, count: Int64)]] = Signal.allCases.map { _ in [] }

    public init() {}

    public static func == (a: DimensionTotals, b: DimensionTotals) -> Bool {
        a.waveform == b.waveform && a.countries.elementsEqual(b.countries, by: { $0 == $1 })
            && a.clients.elementsEqual(b.clients, by: { $0 == $1 }) && a.commentsWaveform == b.commentsWaveform
            && zip(a.byTrack, b.byTrack).allSatisfy { $0.elementsEqual($1, by: { $0 == $1 }) }
    }

    public func values(_ section: DimensionEncoding.Section) -> [(value: DimensionValue, plays: Int64)] {
        section == .client ? clients : countries
    }
}
