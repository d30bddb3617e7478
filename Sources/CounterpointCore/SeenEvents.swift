/// The events already counted, as (UTC hour, `event_id`) pairs: the batch job's
/// de-duplication set (docs/event-format.md: `event_id` identifies an event; a duplicate is the same id
/// in the same hour).
///
/// Built for one insert per event at millions of events per second: open addressing with
/// linear probing over 16-byte slots (a 64-bit hash and where the key lives), keys packed
/// into one growing arena of words (a 26-character ULID takes 48 bytes, not the 80 of an
/// `EventID` and an hour). The hash is seeded per instance from the system's random source,
/// so producers cannot aim collisions at it. Membership is exact: equal hashes are confirmed
/// by comparing the keys.
public struct SeenEvents: Sendable {
    struct Slot {
        var hash: UInt64
        /// Word index of the key's record in `arena`, plus one; 0 marks an empty slot.
        var record: Int
    }

    private var slots: [Slot]
    /// Records of `2 + ceil(length / 8)` words: the hour, the length, the id's words.
    private var arena: [UInt64] = []
    private let seed: UInt64
    public private(set) var count = 0

    public init(minimumCapacity: Int = 1024) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity *= 2 }
        slots = Array(repeating: Slot(hash: 0, record: 0), count: capacity)
        arena.reserveCapacity(minimumCapacity * 6)
        var random = SystemRandomNumberGenerator()
        seed = random.next()
    }

    public var isEmpty: Bool { count == 0 }

    /// Adds the pair; returns `false` if it was already there (the event is a duplicate).
    @discardableResult
    public mutating func insert(_ id: EventID, in hour: Hour) -> Bool {
        if (count + 1) * 2 > slots.count { grow() }
        let hash = self.hash(id, hour)
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        let found: Bool = slots.withUnsafeBufferPointer { slots in
            while slots[index].record != 0 {
                if slots[index].hash == hash && recordMatches(slots[index].record - 1, id, hour) { return true }
                index = (index + 1) & mask
            }
            return false
        }
        if found { return false }
        slots[index] = Slot(hash: hash, record: arena.count + 1)
        arena.append(UInt64(bitPattern: hour.index))
        arena.append(UInt64(id.length))
        Swift.withUnsafeBytes(of: id.words) { words in
            for word in 0..<EventID.wordCount(id.length) { arena.append(words.load(fromByteOffset: word * 8, as: UInt64.self)) }
        }
        count += 1
        return true
    }

    public func contains(_ id: EventID, in hour: Hour) -> Bool {
        let hash = self.hash(id, hour)
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while slots[index].record != 0 {
            if slots[index].hash == hash && recordMatches(slots[index].record - 1, id, hour) { return true }
            index = (index + 1) & mask
        }
        return false
    }

    /// Forgets every pair, keeping the memory (e.g. between the hours of a batch run).
    public mutating func removeAll() {
        for index in slots.indices { slots[index].record = 0 }
        arena.removeAll(keepingCapacity: true)
        count = 0
    }

    @inline(__always)
    private func recordMatches(_ record: Int, _ id: EventID, _ hour: Hour) -> Bool {
        arena.withUnsafeBufferPointer { arena in
            guard arena[record] == UInt64(bitPattern: hour.index), arena[record + 1] == UInt64(id.length) else { return false }
            return Swift.withUnsafeBytes(of: id.words) { words in
                for word in 0..<EventID.wordCount(id.length)
                where arena[record + 2 + word] != words.load(fromByteOffset: word * 8, as: UInt64.self) {
                    return false
                }
                return true
            }
        }
    }

    @inline(__always)
    private func hash(_ id: EventID, _ hour: Hour) -> UInt64 {
        var hash = seed ^ (UInt64(bitPattern: hour.index) &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(id.length)
        Swift.withUnsafeBytes(of: id.words) { words in
            for word in 0..<EventID.wordCount(id.length) {
                hash = (hash ^ words.load(fromByteOffset: word * 8, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
                hash ^= hash >> 29
            }
        }
        // Murmur3's finalizer: every input bit reaches the low bits used as the index.
        return MurmurHash3.finalMix(hash)
    }

    private mutating func grow() {
        var grown = Array(repeating: Slot(hash: 0, record: 0), count: slots.count * 2)
        let mask = grown.count - 1
        grown.withUnsafeMutableBufferPointer { grown in
            for slot in slots where slot.record != 0 {
                var index = Int(truncatingIfNeeded: slot.hash) & mask
                while grown[index].record != 0 { index = (index + 1) & mask }
                grown[index] = slot
            }
        }
        slots = grown
    }
}

extension EventID {
    /// Words holding `length` bytes.
    @inline(__always)
    static func wordCount(_ length: UInt8) -> Int { (Int(length) &+ 7) >> 3 }
}
