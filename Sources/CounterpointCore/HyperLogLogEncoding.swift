/// postgresql-hll's storage format, version 1 (docs/listeners.md): a version-and-type byte, the
/// parameter byte and the cutoff byte, then the data of the type — nothing for empty; 8-byte
/// big-endian hashes in ascending signed order for explicit; `(index, value)` pairs of
/// `log2m + regwidth` bits for the non-zero registers for sparse; every register in `regwidth`
/// bits for full. Bits are packed from the top of each byte; the last byte is padded with zeros.
extension HyperLogLog {
    static let version: UInt8 = 1

    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    /// Appends `encoded` to `out`, growing it once (the store's merges reuse one buffer).
    public func encode(into out: inout [UInt8]) {
        let header = Self.version << 4
        switch contents {
        case .empty:
            out.append(contentsOf: [header | Representation.empty.rawValue, parameters.parameterByte, parameters.cutoffByte])
        case .explicit(let hashes):
            out.reserveCapacity(out.count + 3 + 8 * hashes.count)
            out.append(contentsOf: [header | Representation.explicit.rawValue, parameters.parameterByte, parameters.cutoffByte])
            for hash in hashes {
                withUnsafeBytes(of: UInt64(bitPattern: hash).bigEndian) { out.append(contentsOf: $0) }
            }
        case .registers(let registers):
            let filled = Self.filledCount(registers)
            let sparse = writesSparse(filled: filled)
            let pairWidth = parameters.log2Registers + parameters.registerWidth
            let bits = sparse ? filled * pairWidth : registers.count * parameters.registerWidth
            out.reserveCapacity(out.count + 3 + (bits + 7) / 8)
            let type = sparse ? Representation.sparse : .full
            out.append(contentsOf: [header | type.rawValue, parameters.parameterByte, parameters.cutoffByte])
            var writer = BitWriter()
            if sparse {
                for (index, value) in registers.enumerated() where value != 0 {
                    writer.write(UInt64(index) << UInt64(parameters.registerWidth) | UInt64(value), bits: pairWidth, to: &out)
                }
                writer.finish(to: &out)
            } else {
                Self.appendFull(registers, width: parameters.registerWidth, to: &out)
            }
        }
    }

    /// Appends to `out` the encoding of the sketch of `hashes` (ascending, repeats allowed):
    /// the bytes `encoded` gives for a sketch built by `add(hash:)` from them, written directly
    /// while they fit an explicit sketch (most keys of a flush hold a few), without a sketch.
    static func appendEncoded(sortedHashes hashes: [Int64], parameters: Parameters, to out: inout [UInt8]) {
        var distinct = 0
        for index in hashes.indices where index == 0 || hashes[index - 1] != hashes[index] { distinct += 1 }
        guard distinct > 0, distinct <= parameters.explicitLimit else {
            var sketch = HyperLogLog(parameters)
            for hash in hashes { sketch.add(hash: hash) }
            sketch.encode(into: &out)
            return
        }
        out.append(Self.version << 4 | Representation.explicit.rawValue)
        out.append(parameters.parameterByte)
        out.append(parameters.cutoffByte)
        for index in hashes.indices where index == 0 || hashes[index - 1] != hashes[index] {
            withUnsafeBytes(of: UInt64(bitPattern: hashes[index]).bigEndian) { out.append(contentsOf: $0) }
        }
    }

    /// Decodes a stored sketch. Accepts what the `hll` extension writes (and an explicit sketch
    /// without hashes, which it also reads, as empty); throws a one-line `SketchError` for
    /// anything else: another version, the undefined type, unsupported parameters, a length that
    /// does not match the type, hashes out of order or beyond the explicit limit, sparse indices
    /// out of order or zero values, non-zero padding.
    public init(decoding bytes: some Collection<UInt8>) throws(SketchError) {
        let bytes = Array(bytes)
        let decoded = bytes.withUnsafeBytes { buffer in Result { () throws(SketchError) in try HyperLogLog(decoding: buffer) } }
        self = try decoded.get()
    }

    /// `init(decoding:)` of bytes in place (a stored blob as SQLite hands it over), without a copy.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(SketchError) {
        guard bytes.count >= 3 else { throw SketchError("a sketch has at least 3 bytes, this one \(bytes.count)") }
        guard bytes[0] >> 4 == Self.version else { throw SketchError("sketch schema version \(bytes[0] >> 4) is not supported (only 1)") }
        guard let parameters = Parameters(parameterByte: bytes[1], cutoffByte: bytes[2]) else {
            throw SketchError("unsupported sketch parameters (bytes \(bytes[1]), \(bytes[2]))")
        }
        self.init(parameters)
        let data = UnsafeRawBufferPointer(rebasing: bytes[3...])
        guard let type = Representation(rawValue: bytes[0] & 0x0F) else {
            throw SketchError("sketch type \(bytes[0] & 0x0F) is not empty, explicit, sparse or full")
        }
        switch type {
        case .empty:
            guard data.isEmpty else { throw SketchError("an empty sketch has \(data.count) bytes of data") }
        case .explicit:
            contents = try Self.decodeExplicit(data, parameters)
        case .sparse:
            contents = .registers(try Self.decodeSparse(data, parameters))
        case .full:
            contents = .registers(try Self.decodeFull(data, parameters))
        }
    }

    static func decodeExplicit(_ data: UnsafeRawBufferPointer, _ parameters: Parameters) throws(SketchError) -> Contents {
        guard data.count % 8 == 0 else { throw SketchError("an explicit sketch's data is not whole 8-byte hashes (\(data.count) bytes)") }
        let count = data.count / 8
        guard count <= parameters.explicitLimit else {
            throw SketchError("an explicit sketch holds \(count) hashes, more than its limit of \(parameters.explicitLimit)")
        }
        var hashes: [Int64] = []
        hashes.reserveCapacity(count)
        for number in 0..<count {
            let hash = Int64(bitPattern: UInt64(bigEndian: data.loadUnaligned(fromByteOffset: 8 * number, as: UInt64.self)))
            if let last = hashes.last, last >= hash { throw SketchError("an explicit sketch's hashes are not in ascending order") }
            hashes.append(hash)
        }
        return hashes.isEmpty ? .empty : .explicit(hashes)
    }

    static func decodeSparse(_ data: UnsafeRawBufferPointer, _ parameters: Parameters) throws(SketchError) -> [UInt8] {
        var registers = [UInt8](repeating: 0, count: parameters.registerCount)
        var pairs = SparsePairs(data, parameters)
        while let (index, value) = try pairs.next() { registers[index] = value }
        return registers
    }

    static func decodeFull(_ data: UnsafeRawBufferPointer, _ parameters: Parameters) throws(SketchError) -> [UInt8] {
        let expected = parameters.fullByteCount
        guard data.count == expected else {
            throw SketchError("a full sketch has \(data.count) bytes of registers, not \(expected)")
        }
        // 2^log2m registers are whole groups of eight, and eight registers are `regwidth` whole
        // bytes: there is no padding, and each group is read as one number.
        let width = parameters.registerWidth
        let mask = UInt64(parameters.maxRegisterValue)
        var registers = [UInt8](repeating: 0, count: parameters.registerCount)
        registers.withUnsafeMutableBufferPointer { registers in
            for group in 0..<registers.count / 8 {
                var word: UInt64 = 0
                for byte in data[(group * width)..<(group * width + width)] { word = word << 8 | UInt64(byte) }
                for index in 0..<8 {
                    registers[group * 8 + index] = UInt8(truncatingIfNeeded: word >> UInt64((7 - index) * width) & mask)
                }
            }
        }
        return registers
    }

    /// Appends every register in `regwidth` bits, eight registers as `regwidth` bytes.
    static func appendFull(_ registers: [UInt8], width: Int, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: registers.count / 8 * width))
        out.withUnsafeMutableBufferPointer { out in
            registers.withUnsafeBufferPointer { registers in
                for group in 0..<registers.count / 8 {
                    var word: UInt64 = 0
                    for index in 0..<8 { word = word << UInt64(width) | UInt64(registers[group * 8 + index]) }
                    for byte in 0..<width {
                        out[start + group * width + byte] = UInt8(truncatingIfNeeded: word >> UInt64(8 * (width - 1 - byte)))
                    }
                }
            }
        }
    }

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
        guard HyperLogLog(parameters).writesSparse(filled: filled) else { return true }
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
        let sketch = HyperLogLog(parameters)
        for hash in hashes {
            let (index, value) = sketch.register(of: hash)
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
        guard sketch.writesSparse(filled: merged.count) else { return false }
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
        let (index, registerValue) = HyperLogLog(parameters).register(of: hash)
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

/// The `(index, value)` pairs of a sparse sketch's data, in order, checked as
/// `HyperLogLog(decoding:)` checks them (ascending indices, no zero value, zero padding).
struct SparsePairs {
    private var reader: BitReader
    private let pairWidth: Int
    private let registerWidth: Int
    private let valueMask: UInt64
    private let count: Int
    private var number = 0
    private var previous = -1

    init(_ data: UnsafeRawBufferPointer, _ parameters: HyperLogLog.Parameters) {
        reader = BitReader(data)
        pairWidth = parameters.log2Registers + parameters.registerWidth
        registerWidth = parameters.registerWidth
        valueMask = UInt64(parameters.maxRegisterValue)
        count = data.count * 8 / pairWidth
    }

    /// The next pair; nil after the last one, once the padding has been checked.
    mutating func next() throws(SketchError) -> (index: Int, value: UInt8)? {
        guard number < count else {
            try reader.checkPadding()
            return nil
        }
        let pair = reader.read(bits: pairWidth)
        // Pairs narrower than a byte: the zero padding of the last byte can be a whole pair's
        // width. A stored register is never zero, so a last pair of zeros that the pairs
        // before it already needed that byte for is that padding.
        if pair == 0, number == count - 1, previous >= 0, (number * pairWidth + 7) / 8 == reader.data.count {
            number = count
            try reader.checkPadding()
            return nil
        }
        number += 1
        let index = Int(pair >> UInt64(registerWidth))
        let value = UInt8(pair & valueMask)
        guard index > previous else { throw SketchError("a sparse sketch's registers are not in ascending order") }
        guard value != 0 else { throw SketchError("a sparse sketch stores register \(index) as zero") }
        previous = index
        return (index, value)
    }
}

/// Writes values of up to 57 bits, most significant bit first, to the end of a byte array.
struct BitWriter {
    var pending: UInt64 = 0
    var pendingBits = 0

    mutating func write(_ value: UInt64, bits: Int, to bytes: inout [UInt8]) {
        pending = pending << UInt64(bits) | value
        pendingBits += bits
        while pendingBits >= 8 {
            pendingBits -= 8
            bytes.append(UInt8(truncatingIfNeeded: pending >> UInt64(pendingBits)))
        }
        pending &= (1 << UInt64(pendingBits)) - 1
    }

    /// Writes the last byte, padded with zero bits.
    mutating func finish(to bytes: inout [UInt8]) {
        if pendingBits > 0 { bytes.append(UInt8(truncatingIfNeeded: pending << UInt64(8 - pendingBits))) }
        pendingBits = 0
    }
}

/// Reads what `BitWriter` wrote; the caller never reads past the end.
struct BitReader {
    let data: UnsafeRawBufferPointer
    var position = 0
    var pending: UInt64 = 0
    var pendingBits = 0

    init(_ data: UnsafeRawBufferPointer) {
        self.data = data
    }

    mutating func read(bits: Int) -> UInt64 {
        while pendingBits < bits {
            pending = pending << 8 | UInt64(data[position])
            position += 1
            pendingBits += 8
        }
        pendingBits -= bits
        let value = pending >> UInt64(pendingBits)
        pending &= (1 << UInt64(pendingBits)) - 1
        return value
    }

    /// What is left must be fewer than 8 bits, all zero.
    func checkPadding() throws(SketchError) {
        guard position == data.count, pendingBits < 8 else { throw SketchError("a sketch has bytes beyond its registers") }
        guard pending == 0 else { throw SketchError("a sketch's padding bits are not zero") }
    }
}
