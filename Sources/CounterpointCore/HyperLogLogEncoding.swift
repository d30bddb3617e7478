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
            let sparse = parameters.writesSparse(filled: filled)
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
