/// Plays per (track, UTC hour): the unit of counting (docs/architecture.md), aggregated in memory by the
/// batch job and by the realtime consumer between flushes.
///
/// Open addressing with linear probing over 24-byte slots, hashed with a per-instance random
/// seed; faster than a `Dictionary` keyed by a struct because it hashes two words with a
/// multiply-and-shift mix instead of SipHash. Track ids are ≥ 1 (docs/event-format.md), so track 0 marks
/// an empty slot.
public struct PlayCounts: Sendable, Sequence {
    /// One (track, hour) counter.
    public typealias Element = CountRow

    struct Slot: TrackHourRecord {
        var trackID: Int64
        var hour: Int64
        var plays: Int64
    }

    private var slots: [Slot]
    private let seed: UInt64
    /// Number of (track, hour) keys.
    public private(set) var count = 0
    /// Sum of plays over all keys.
    public private(set) var totalPlays: Int64 = 0

    public init(minimumCapacity: Int = 1024) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity *= 2 }
        slots = Array(repeating: Slot(trackID: 0, hour: 0, plays: 0), count: capacity)
        var random = SystemRandomNumberGenerator()
        seed = random.next()
    }

    public var isEmpty: Bool { count == 0 }

    /// Adds `plays` to the key (track ids must be ≥ 1).
    public mutating func add(trackID: Int64, hour: Hour, plays: Int64 = 1) {
        precondition(trackID >= 1, "track ids start at 1")
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: hash(trackID, hour.index)) & mask
        let isNew: Bool = slots.withUnsafeMutableBufferPointer { slots in
            while slots[index].trackID != 0 {
                if slots[index].trackID == trackID && slots[index].hour == hour.index {
                    slots[index].plays += plays
                    return false
                }
                index = (index + 1) & mask
            }
            slots[index] = Slot(trackID: trackID, hour: hour.index, plays: plays)
            return true
        }
        if isNew { count += 1 }
        totalPlays += plays
    }

    /// Forgets every key, keeping the memory (e.g. after a flush).
    public mutating func removeAll() {
        for index in slots.indices { slots[index].trackID = 0 }
        count = 0
        totalPlays = 0
    }

    /// Every key with its plays, ordered by track then hour (the order the batch store's index
    /// wants its rows in) or by hour then track (the realtime store's). A plain loop inside
    /// this module, so callers elsewhere do not pay for an unspecialized generic iterator per key.
    public func sortedElements(_ order: KeyOrder = .trackThenHour) -> [Element] {
        var occupied: [Slot] = []
        occupied.reserveCapacity(count)
        slots.withUnsafeBufferPointer { slots in
            for slot in slots where slot.trackID != 0 { occupied.append(slot) }
        }
        var buffer: [Slot] = []
        TrackHourSort.sort(&occupied, buffer: &buffer, order: order)
        return occupied.map { Element(trackID: $0.trackID, hour: Hour(index: $0.hour), plays: $0.plays) }
    }

    /// The keys in no particular order.
    public func makeIterator() -> some IteratorProtocol<Element> {
        slots.lazy.filter { $0.trackID != 0 }
            .map { Element(trackID: $0.trackID, hour: Hour(index: $0.hour), plays: $0.plays) }
            .makeIterator()
    }

    @inline(__always)
    private func hash(_ trackID: Int64, _ hour: Int64) -> UInt64 {
        MurmurHash3.finalMix(seed ^ (UInt64(bitPattern: trackID) &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(bitPattern: hour))
    }

    private mutating func grow() {
        var grown = Array(repeating: Slot(trackID: 0, hour: 0, plays: 0), count: slots.count * 2)
        let mask = grown.count - 1
        grown.withUnsafeMutableBufferPointer { grown in
            for slot in slots where slot.trackID != 0 {
                var index = Int(truncatingIfNeeded: hash(slot.trackID, slot.hour)) & mask
                while grown[index].trackID != 0 { index = (index + 1) & mask }
                grown[index] = slot
            }
        }
        slots = grown
    }
}
