/// The dimension counts of one (track, hour) in their stored form (`DimensionEncoding`): the
/// row shape that flows from aggregation through both layers' writers, beside `CountRow`.
public struct DimensionRow: Hashable, Sendable {
    public var trackID: Int64
    public var hour: Hour
    public var encoded: [UInt8]

    public init(trackID: Int64, hour: Hour, encoded: [UInt8]) {
        self.trackID = trackID
        self.hour = hour
        self.encoded = encoded
    }
}

/// Plays per (track, hour, waveform bucket, client, country), aggregated in memory next to
/// `PlayCounts` by the batch job and the realtime consumer, and turned into one
/// `DimensionRow` per (track, hour) when handed to a store.
///
/// One probe per play: the three dimensions form one key (client and country interned to
/// small numbers first), so adding a play costs about what `PlayCounts.add` does, and
/// nothing is allocated once the tables have grown to the traffic.
public struct DimensionCounts: Sendable {
    struct Slot {
        var trackID: Int64
        var hour: Int64
        /// bucket (7 bits, 127 = none) | client id << 7 (28 bits) | country id << 35 (28 bits).
        var combination: UInt64
        var plays: Int64
    }

    static let noBucket: UInt64 = 127
    static let noValue: UInt64 = (1 << 28) - 1

    private var slots: [Slot]
    private var used = 0
    private var values = ValueInterner()
    private let seed: UInt64

    public init(minimumCapacity: Int = 1024) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity *= 2 }
        slots = Array(repeating: Slot(trackID: 0, hour: 0, combination: 0, plays: 0), count: capacity)
        var random = SystemRandomNumberGenerator()
        seed = random.next()
    }

    public var isEmpty: Bool { used == 0 }

    /// Adds one play (track ids must be ≥ 1).
    @inline(__always)
    public mutating func add(trackID: Int64, hour: Hour, _ dimensions: PlayDimensions, plays: Int64 = 1) {
        precondition(trackID >= 1, "track ids start at 1")
        let bucket = dimensions.waveformBucket.map { UInt64(UInt8(bitPattern: $0)) } ?? Self.noBucket
        let client = dimensions.client.map { values.id(of: $0) } ?? Self.noValue
        let country = dimensions.country.map { values.id(of: $0) } ?? Self.noValue
        // A play with none of the three adds nothing: the answers derive it from the plays.
        if bucket == Self.noBucket && client == Self.noValue && country == Self.noValue { return }
        let combination = bucket | client << 7 | country << 35
        if (used + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: hash(trackID, hour.index, combination)) & mask
        let isNew: Bool = slots.withUnsafeMutableBufferPointer { slots in
            while slots[index].trackID != 0 {
                if slots[index].trackID == trackID && slots[index].hour == hour.index && slots[index].combination == combination {
                    slots[index].plays &+= plays
                    return false
                }
                index = (index + 1) & mask
            }
            slots[index] = Slot(trackID: trackID, hour: hour.index, combination: combination, plays: plays)
            return true
        }
        if isNew { used += 1 }
    }

    /// Forgets every play, keeping the memory (e.g. after a flush).
    public mutating func removeAll() {
        if used > 0 {
            for index in slots.indices { slots[index].trackID = 0 }
        }
        used = 0
        values.removeAll()
    }

    /// One row per (track, hour), ordered by track then hour.
    public func rows() -> [DimensionRow] {
        var occupied: [Slot] = []
        occupied.reserveCapacity(used)
        slots.withUnsafeBufferPointer { slots in
            for slot in slots where slot.trackID != 0 { occupied.append(slot) }
        }
        occupied.sort { $0.trackID != $1.trackID ? $0.trackID < $1.trackID : $0.hour < $1.hour }
        // Each value's place in byte order, worked out once: entries are then sorted by a small integer.
        let order = values.sortedIDs()
        var rankOfID = [Int](repeating: 0, count: order.count)
        for (rank, id) in order.enumerated() { rankOfID[id] = rank }

        var rows: [DimensionRow] = []
        rows.reserveCapacity(occupied.count / 2)
        var waveform = [Int64](repeating: 0, count: WaveformBucket.count)
        var bucketsSeen = (low: UInt64(0), high: UInt64(0))
        var sectionCounts = [[Int64](repeating: 0, count: order.count), [Int64](repeating: 0, count: order.count)]
        var touched: [[Int]] = [[], []]
        var start = 0
        while start < occupied.count {
            let trackID = occupied[start].trackID, hour = occupied[start].hour
            var end = start
            while end < occupied.count && occupied[end].trackID == trackID && occupied[end].hour == hour {
                let combination = occupied[end].combination, plays = occupied[end].plays
                let bucket = Int(combination & 127)
                if bucket != Int(Self.noBucket) {
                    waveform[bucket] += plays
                    if bucket < 64 { bucketsSeen.low |= 1 << UInt64(bucket) } else { bucketsSeen.high |= 1 << UInt64(bucket - 64) }
                }
                // Section 0 is countries, 1 clients (their order in the blob).
                func count(_ section: Int, _ id: UInt64) {
                    guard id != Self.noValue else { return }
                    let rank = rankOfID[Int(id)]
                    if sectionCounts[section][rank] == 0 { touched[section].append(rank) }
                    sectionCounts[section][rank] += plays
                }
                count(0, combination >> 35 & Self.noValue)
                count(1, combination >> 7 & Self.noValue)
                end += 1
            }
            var encoded: [UInt8] = []
            encoded.reserveCapacity(16)
            encoded.append(UInt8(bucketsSeen.low.nonzeroBitCount + bucketsSeen.high.nonzeroBitCount))
            for half in 0..<2 {
                var bits = half == 0 ? bucketsSeen.low : bucketsSeen.high
                let offset = half * 64
                while bits != 0 {
                    let bucket = offset + bits.trailingZeroBitCount
                    bits &= bits - 1
                    encoded.append(UInt8(bucket))
                    DimensionEncoding.appendVarint(DimensionEncoding.zigzag(waveform[bucket]), to: &encoded)
                    waveform[bucket] = 0
                }
            }
            bucketsSeen = (0, 0)
            for section in 0..<2 {
                touched[section].sort()
                DimensionEncoding.appendVarint(UInt64(touched[section].count), to: &encoded)
                for rank in touched[section] {
                    values[UInt64(order[rank])].withBytes { bytes in
                        encoded.append(UInt8(bytes.count))
                        encoded.append(contentsOf: bytes)
                    }
                    DimensionEncoding.appendVarint(DimensionEncoding.zigzag(sectionCounts[section][rank]), to: &encoded)
                    sectionCounts[section][rank] = 0
                }
                touched[section].removeAll(keepingCapacity: true)
            }
            if encoded.count == DimensionEncoding.Section.allCases.count { encoded.removeAll() }
            rows.append(DimensionRow(trackID: trackID, hour: Hour(index: hour), encoded: encoded))
            start = end
        }
        return rows
    }

    @inline(__always)
    private func hash(_ trackID: Int64, _ hour: Int64, _ combination: UInt64) -> UInt64 {
        var hash = seed ^ (UInt64(bitPattern: trackID) &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(bitPattern: hour) ^ (combination &* 0xD6E8_FEB8_6659_FD93)
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash &*= 0xC4CE_B9FE_1A85_EC53
        return hash ^ (hash >> 33)
    }

    private mutating func grow() {
        var grown = Array(repeating: Slot(trackID: 0, hour: 0, combination: 0, plays: 0), count: slots.count * 2)
        let mask = grown.count - 1
        grown.withUnsafeMutableBufferPointer { grown in
            for slot in slots where slot.trackID != 0 {
                var index = Int(truncatingIfNeeded: hash(slot.trackID, slot.hour, slot.combination)) & mask
                while grown[index].trackID != 0 { index = (index + 1) & mask }
                grown[index] = slot
            }
        }
        slots = grown
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

/// SPEC §5's breakdown order: every value with plays > 0 by plays descending, then value
/// ascending by UTF-8 bytes; `nil` (plays without the field: `totalPlays` minus the values'
/// plays) last, when it has any.
public enum Breakdown {
    public static func ordered(_ values: [(value: DimensionValue, plays: Int64)], totalPlays: Int64)
        -> [(value: DimensionValue?, plays: Int64)] {
        let positive = values.filter { $0.plays > 0 }
            .sorted { $0.plays != $1.plays ? $0.plays > $1.plays : $0.value < $1.value }
        var entries: [(value: DimensionValue?, plays: Int64)] = positive.map { ($0.value, $0.plays) }
        let withValue = positive.reduce(Int64(0)) { $0 &+ $1.plays }
        if totalPlays > withValue { entries.append((nil, totalPlays - withValue)) }
        return entries
    }
}
