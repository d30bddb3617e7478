/// Every signal's net count per (subject, UTC hour): the unit of counting (docs/architecture.md),
/// aggregated in memory by the batch job and by the realtime consumer between flushes.
///
/// Open addressing with linear probing over 24-byte slots, hashed with a per-instance random
/// seed; faster than a `Dictionary` keyed by a struct because it hashes two words with a
/// multiply-and-shift mix instead of SipHash. A slot counts one signal of one (subject, hour): its
/// key is the subject's id and `hour << 3 | signal.ordinal`, so counting plays alone costs what it did
/// when plays were all there was, and the signals of a key meet again when the slots are sorted
/// (`sortedElements`). Ids are ≥ 1 (docs/event-format.md), so id 0 marks an empty slot.
public struct HourCounts: Sendable, Sequence {
    /// One (subject, hour) with every signal's count.
    public typealias Element = CountRow

    struct Slot: KeyHourRecord {
        var id: Int64
        /// `hour << signalBits | signal.ordinal`; sorted on, it orders by hour then signal.
        var hour: Int64
        var count: Int64
    }

    /// A key's every signal, for the second sort of `sortedElements(.hourThenID)`.
    private struct Merged: KeyHourRecord {
        var id: Int64
        var hour: Int64
        var counts: SignalCounts
    }

    static let signalBits: Int64 = 3

    private var slots: [Slot]
    private let seed: UInt64
    /// Number of (subject, hour, signal) keys.
    public private(set) var count = 0
    /// Sum of plays over all keys.
    public private(set) var totalPlays: Int64 = 0
    /// Whether a signal other than plays was counted since the last `removeAll`.
    private var hasOtherSignals = false

    public init(minimumCapacity: Int = 1024) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity *= 2 }
        slots = Array(repeating: Slot(id: 0, hour: 0, count: 0), count: capacity)
        var random = SystemRandomNumberGenerator()
        seed = random.next()
    }

    public var isEmpty: Bool { count == 0 }

    /// Adds `weight` to the signal of the key (ids must be ≥ 1).
    @inline(__always)
    public mutating func add(id: Int64, hour: Hour, signal: Signal = .plays, weight: Int64 = 1) {
        precondition(id >= 1, "ids start at 1")
        if signal == .plays {
            totalPlays += weight
        } else {
            hasOtherSignals = true
        }
        add(id: id, key: hour.index << Self.signalBits | Int64(signal.ordinal), weight)
    }

    private mutating func add(id: Int64, key: Int64, _ weight: Int64) {
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: hash(id, key)) & mask
        let isNew: Bool = slots.withUnsafeMutableBufferPointer { slots in
            while slots[index].id != 0 {
                if slots[index].id == id && slots[index].hour == key {
                    slots[index].count += weight
                    return false
                }
                index = (index + 1) & mask
            }
            slots[index] = Slot(id: id, hour: key, count: weight)
            return true
        }
        if isNew { count += 1 }
    }

    /// Forgets every key, keeping the memory (e.g. after a flush).
    public mutating func removeAll() {
        for index in slots.indices { slots[index].id = 0 }
        count = 0
        totalPlays = 0
        hasOtherSignals = false
    }

    /// Every (subject, hour) with its signals, ordered by id then hour (the order the batch
    /// store's index wants its rows in) or by hour then id (the realtime store's). A plain
    /// loop inside this module, so callers elsewhere do not pay for an unspecialized generic
    /// iterator per key.
    public func sortedElements(_ order: KeyOrder = .idThenHour) -> CountRowList {
        var occupied: [Slot] = []
        occupied.reserveCapacity(count)
        slots.withUnsafeBufferPointer { slots in
            for slot in slots where slot.id != 0 { occupied.append(slot) }
        }
        var buffer: [Slot] = []
        // Plays alone: one key per (subject, hour), already in either order once sorted.
        guard hasOtherSignals else {
            KeyHourSort.sort(&occupied, buffer: &buffer, order: order)
            var rows = CountRowList()
            rows.reserveCapacity(occupied.count)
            for slot in occupied { rows.append(Element(id: slot.id, hour: Hour(index: slot.hour >> Self.signalBits), plays: slot.count)) }
            return rows
        }
        // Sorted by (subject, hour, signal), a key's signals are neighbours.
        KeyHourSort.sort(&occupied, buffer: &buffer, order: .idThenHour)
        var merged: [Merged] = []
        merged.reserveCapacity(occupied.count)
        for slot in occupied {
            let hour = slot.hour >> Self.signalBits
            let signal = Signal.allCases[Int(slot.hour & (1 << Self.signalBits - 1))]
            if let last = merged.indices.last, merged[last].id == slot.id, merged[last].hour == hour {
                merged[last].counts[signal] += slot.count
            } else {
                var counts = SignalCounts()
                counts[signal] = slot.count
                merged.append(Merged(id: slot.id, hour: hour, counts: counts))
            }
        }
        if order == .hourThenID {
            var mergedBuffer: [Merged] = []
            KeyHourSort.sort(&merged, buffer: &mergedBuffer, order: .hourThenID)
        }
        var rows = CountRowList()
        rows.reserveCapacity(merged.count)
        for key in merged { rows.append(Element(id: key.id, hour: Hour(index: key.hour), counts: key.counts)) }
        return rows
    }

    /// The (subject, hour)s, in (subject, hour) order (`sortedElements`).
    public func makeIterator() -> some IteratorProtocol<Element> {
        sortedElements().makeIterator()
    }

    @inline(__always)
    private func hash(_ id: Int64, _ key: Int64) -> UInt64 {
        MurmurHash3.finalMix(seed ^ (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(bitPattern: key))
    }

    private mutating func grow() {
        var grown = Array(repeating: Slot(id: 0, hour: 0, count: 0), count: slots.count * 2)
        let mask = grown.count - 1
        grown.withUnsafeMutableBufferPointer { grown in
            for slot in slots where slot.id != 0 {
                var index = Int(truncatingIfNeeded: hash(slot.id, slot.hour)) & mask
                while grown[index].id != 0 { index = (index + 1) & mask }
                grown[index] = slot
            }
        }
        slots = grown
    }
}
