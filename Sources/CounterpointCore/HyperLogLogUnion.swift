/// The union of two stored sketches made from their bytes (the store's merge of a flush's
/// sketch into the stored one), without the registers where it can.
extension HyperLogLog {
    /// The union of two encoded sketches, appended to `out`: the bytes `encoded` gives for
    /// `HyperLogLog(decoding: a).union(HyperLogLog(decoding: b))`, and the same errors.
    ///
    /// The store's most frequent merges — a stored sketch of registers (a popular track's hour)
    /// with a flush's few explicit hashes — are made without the 2^log2m registers: a full
    /// sketch's bytes are copied and only the registers the hashes raise are rewritten, a sparse
    /// sketch's pairs are merged with the hashes' pairs. Every other pair, and a union that
    /// would change how the registers are written, goes through `formUnion`.
    public static func unite(encoded a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer,
                             into out: inout [UInt8]) throws(SketchError) {
        if let (parameters, type) = registersAndExplicit(a, b) {
            let added = try decodeExplicit(UnsafeRawBufferPointer(rebasing: b[3...]), parameters)
            let hashes = if case .explicit(let hashes) = added { hashes } else { [Int64]() }
            let stored = UnsafeRawBufferPointer(rebasing: a[3...])
            let done = type == .full ? appendRaised(full: stored, by: hashes, parameters, header: a.prefix(3), to: &out)
                                     : try appendRaised(sparse: stored, by: hashes, parameters, header: a.prefix(3), to: &out)
            if done { return }
        }
        var union = try HyperLogLog(decoding: a)
        try union.formUnion(HyperLogLog(decoding: b))
        union.encode(into: &out)
    }

    /// The parameters and type of `a` when it is a sparse or full sketch of the right length and
    /// `b` an explicit one with the same parameters.
    private static func registersAndExplicit(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer)
        -> (Parameters, Representation)? {
        guard a.count >= 3, b.count >= 3, a[1] == b[1], a[2] == b[2], b[0] == version << 4 | Representation.explicit.rawValue,
              a[0] >> 4 == version, let type = Representation(rawValue: a[0] & 0x0F), type == .full || type == .sparse,
              let parameters = Parameters(parameterByte: a[1], cutoffByte: a[2]),
              type == .sparse || a.count == 3 + parameters.fullByteCount
        else { return nil }
        return (parameters, type)
    }

    /// A full sketch's bytes with `hashes` added, appended to `out`; false (and nothing appended)
    /// when the result would be written sparse (a full sketch another writer made with fewer
    /// filled registers than the rule writes full).
    private static func appendRaised(full stored: UnsafeRawBufferPointer, by hashes: [Int64], _ parameters: Parameters,
                                     header: UnsafeRawBufferPointer.SubSequence, to out: inout [UInt8]) -> Bool {
        let start = out.count
        out.append(contentsOf: header)
        stored.withMemoryRebound(to: UInt8.self) { out.append(contentsOf: $0) }
        // Only values local to the closure change in it: no access to check per register.
        let newlyFilled = out.withUnsafeMutableBytes { out in
            let registers = UnsafeMutableRawBufferPointer(rebasing: out[(start + 3)...])
            var count = 0
            for hash in hashes { count += raise(registers, with: hash, parameters) }
            return count
        }
        let filled = filledCount(full: stored, parameters) + newlyFilled
        guard parameters.writesSparse(filled: filled) else { return true }
        out.removeSubrange(start...)
        return false
    }

    /// A sparse sketch's pairs merged with those `hashes` set, appended to `out` as a sparse
    /// sketch; false (and nothing appended) when the result would be written full.
    private static func appendRaised(sparse stored: UnsafeRawBufferPointer, by hashes: [Int64], _ parameters: Parameters,
                                     header: UnsafeRawBufferPointer.SubSequence, to out: inout [UInt8]) throws(SketchError) -> Bool {
        // A pair as one number, index above value: ascending numbers are ascending indices, and
        // of one index's pairs the largest value comes last.
        let valueBits = UInt32(8)
        var raised: [UInt32] = []
        raised.reserveCapacity(hashes.count + 1)
        for hash in hashes {
            let (index, value) = parameters.register(of: hash)
            if value > 0 { raised.append(UInt32(index) << valueBits | UInt32(value)) }
        }
        raised.sort()
        raised.append(.max) // past every register: the merge below needs no end test
        let pairWidth = parameters.log2Registers + parameters.registerWidth
        var merged: [UInt32] = []
        merged.reserveCapacity(stored.count * 8 / pairWidth + raised.count)
        var next = 0
        var pairs = SparsePairs(stored, parameters)
        while true {
            let storedPair = try pairs.next().map { UInt32($0.index) << valueBits | UInt32($0.value) } ?? .max
            // The hashes' registers before this stored one, the largest value of each.
            while raised[next] >> valueBits < storedPair >> valueBits {
                if let last = merged.last, last >> valueBits == raised[next] >> valueBits {
                    merged[merged.count - 1] = raised[next]
                } else {
                    merged.append(raised[next])
                }
                next += 1
            }
            guard storedPair != .max else { break }
            var pair = storedPair
            while raised[next] >> valueBits == storedPair >> valueBits { pair = max(pair, raised[next]); next += 1 }
            merged.append(pair)
        }
        guard parameters.writesSparse(filled: merged.count) else { return false }
        out.reserveCapacity(out.count + 3 + (merged.count * pairWidth + 7) / 8)
        out.append(contentsOf: header)
        var writer = BitWriter()
        for pair in merged {
            writer.write(UInt64(pair >> valueBits) << UInt64(parameters.registerWidth) | UInt64(pair & 0xFF), bits: pairWidth, to: &out)
        }
        writer.finish(to: &out)
        return true
    }

    /// The non-zero registers of a full sketch's data (of the right length), eight at a time:
    /// in each group's `regwidth` bytes, adding every register's low bits to all ones carries
    /// into its top bit when they are not zero, and or-ing the register itself sets it when the
    /// top bit was — so the top bits set are the registers filled, without a branch.
    static func filledCount(full data: UnsafeRawBufferPointer, _ parameters: Parameters) -> Int {
        let width = parameters.registerWidth
        var low: UInt64 = 0, top: UInt64 = 0
        for index in 0..<8 {
            low |= ((1 << UInt64(width - 1)) - 1) << UInt64(index * width)
            top |= 1 << UInt64(index * width + width - 1)
        }
        var filled = 0
        for group in 0..<parameters.registerCount / 8 {
            let offset = group * width
            var word: UInt64
            if offset + 8 <= data.count {
                word = UInt64(bigEndian: data.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) >> UInt64(64 - 8 * width)
            } else {
                word = 0
                for byte in data[offset..<(offset + width)] { word = word << 8 | UInt64(byte) }
            }
            filled += (((word & low) &+ low | word) & top).nonzeroBitCount
        }
        return filled
    }

    /// Raises the register `hash` chooses in a full sketch's packed data to the hash's value
    /// (`update`), in place; returns 1 when the register was zero and no longer is, else 0.
    static func raise(_ registers: UnsafeMutableRawBufferPointer, with hash: Int64, _ parameters: Parameters) -> Int {
        let (index, registerValue) = parameters.register(of: hash)
        let value = UInt16(registerValue)
        let width = parameters.registerWidth
        let bit = index * width
        // The register lies within the two bytes from its first one (regwidth ≤ 5).
        let first = bit / 8
        let hasSecond = first + 1 < registers.count
        var pair = UInt16(registers[first]) << 8 | (hasSecond ? UInt16(registers[first + 1]) : 0)
        let shift = UInt16(16 - bit % 8 - width)
        let mask = UInt16(parameters.maxRegisterValue) << shift
        let old = (pair & mask) >> shift
        guard value > old else { return 0 }
        pair = pair & ~mask | value << shift
        registers[first] = UInt8(truncatingIfNeeded: pair >> 8)
        if hasSecond { registers[first + 1] = UInt8(truncatingIfNeeded: pair) }
        return old == 0 ? 1 : 0
    }
}
