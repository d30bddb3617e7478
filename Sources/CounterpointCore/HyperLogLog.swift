#if canImport(Glibc)
import Glibc // log(), the same libm function postgresql-hll's estimator calls
#elseif canImport(Darwin)
import Darwin
#endif

/// A distinct-count sketch in postgresql-hll's storage format, version 1 (docs/listeners.md): the
/// same hashes give the same bytes as the `hll` extension, and the extension's
/// `hll_cardinality` gives the same estimate as `cardinality`.
///
/// Like the extension, a sketch keeps the hashes themselves while there are few (explicit, an
/// exact count), then HyperLogLog registers. Registers are written sparse (index and value of
/// each non-zero register) while that is smaller than writing them all (full); that choice is
/// made when encoding, as the extension makes it.
public struct HyperLogLog: Sendable, Hashable {
    public let parameters: Parameters
    var contents: Contents

    enum Contents: Sendable, Hashable {
        case empty
        /// Distinct hashes in ascending signed order, at most `parameters.explicitLimit`.
        case explicit([Int64])
        /// One value per register.
        case registers([UInt8])
    }

    /// How a sketch is written: postgresql-hll's type ordinals.
    public enum Representation: UInt8, Sendable {
        case empty = 1, explicit = 2, sparse = 3, full = 4
    }

    public init(_ parameters: Parameters = .listeners) {
        self.parameters = parameters
        self.contents = .empty
    }

    /// A sketch of these listener ids, hashed as `hll_hash_bigint(id, 0)`.
    public init(listenerIDs: some Sequence<Int64>, parameters: Parameters = .listeners) {
        self.init(parameters)
        for id in listenerIDs { add(listenerID: id) }
    }

    public mutating func add(listenerID: Int64) {
        add(hash: MurmurHash3.hashBigint(listenerID))
    }

    /// Adds one hash, promoting explicit to registers when the explicit limit would be passed.
    public mutating func add(hash: Int64) {
        switch contents {
        case .empty:
            if parameters.explicitLimit == 0 {
                var registers = emptyRegisters
                update(&registers, with: hash)
                contents = .registers(registers)
            } else {
                contents = .explicit([hash])
            }
        case .explicit(var hashes):
            let position = hashes.insertionPoint(of: hash)
            if position < hashes.count && hashes[position] == hash { return }
            contents = .empty // so that `hashes` is the only reference and grows in place
            if hashes.count < parameters.explicitLimit {
                hashes.insert(hash, at: position)
                contents = .explicit(hashes)
            } else {
                var registers = emptyRegisters
                for existing in hashes { update(&registers, with: existing) }
                update(&registers, with: hash)
                contents = .registers(registers)
            }
        case .registers(var registers):
            contents = .empty
            update(&registers, with: hash)
            contents = .registers(registers)
        }
    }

    /// Unites `other` into this sketch as `hll_union` does: the result is the sketch of every
    /// hash of both, explicit while the union of two explicit sketches is within the limit.
    /// Throws when the parameters differ, as the extension does.
    public mutating func formUnion(_ other: HyperLogLog) throws(SketchError) {
        guard parameters == other.parameters else {
            throw SketchError("cannot unite sketches with different parameters (\(parameters); \(other.parameters))")
        }
        switch (contents, other.contents) {
        case (_, .empty):
            return
        case (.empty, _):
            contents = other.contents
        case (.explicit(let mine), .explicit(let theirs)):
            let union = mine.sortedUnion(theirs)
            if union.count <= parameters.explicitLimit {
                contents = .explicit(union)
            } else {
                var registers = emptyRegisters
                for hash in union { update(&registers, with: hash) }
                contents = .registers(registers)
            }
        case (.explicit(let hashes), .registers(var registers)), (.registers(var registers), .explicit(let hashes)):
            contents = .empty
            for hash in hashes { update(&registers, with: hash) }
            contents = .registers(registers)
        case (.registers(var registers), .registers(let theirs)):
            contents = .empty
            for index in registers.indices where registers[index] < theirs[index] { registers[index] = theirs[index] }
            contents = .registers(registers)
        }
    }

    public func union(_ other: HyperLogLog) throws(SketchError) -> HyperLogLog {
        var result = self
        try result.formUnion(other)
        return result
    }

    /// True while the sketch holds the hashes themselves: `cardinality` is then an exact count.
    public var isExact: Bool {
        if case .registers = contents { return false }
        return true
    }

    /// How `encoded` writes this sketch.
    public var representation: Representation {
        switch contents {
        case .empty: .empty
        case .explicit: .explicit
        case .registers(let registers): parameters.writesSparse(filled: Self.filledCount(registers)) ? .sparse : .full
        }
    }

    /// The estimated number of distinct hashes, exactly as postgresql-hll's `hll_cardinality`
    /// computes it (the same operations in the same order, so the same double): the count of an
    /// explicit sketch; else the HyperLogLog estimate with linear counting below 5/2 m and the
    /// large-range correction near 2^L, L = 2^regwidth - 2 + log2m. One exception: a sketch so
    /// full that the raw estimate reaches 2^L, where the correction takes the logarithm of a
    /// number ≤ 0 and postgresql-hll answers NaN, answers the correction's value one below it,
    /// 2^L · ln 2^L — the most the sketch can tell, and a number the reader can round. Only
    /// sketches with few small registers get there (log2m 4 and regwidth 3 past about a
    /// thousand hashes); Counterpoint's own would need some 2^42.
    public var cardinality: Double {
        switch contents {
        case .empty: return 0
        case .explicit(let hashes): return Double(hashes.count)
        case .registers(let registers):
            let count = parameters.registerCount
            var sum = 0.0
            var zeros = 0
            for value in registers {
                sum += 1.0 / Double(1 << Int(value))
                if value == 0 { zeros += 1 }
            }
            let estimator = Self.alphaMSquared(count) / sum
            let twoToL = Int64(1) << (Int(parameters.maxRegisterValue) - 1 + parameters.log2Registers)
            if zeros != 0 && estimator < 5.0 * Double(count) / 2.0 {
                return Double(count) * log(Double(count) / Double(zeros))
            } else if estimator <= Double(twoToL) / 30.0 {
                return estimator
            } else if estimator < Double(twoToL) {
                return Double(-twoToL) * log(1.0 - estimator / Double(twoToL))
            } else {
                return Double(twoToL) * log(Double(twoToL))
            }
        }
    }

    // MARK: Registers

    var emptyRegisters: [UInt8] { [UInt8](repeating: 0, count: parameters.registerCount) }

    /// Raises the register `hash` chooses to the value it gives (`Parameters.register(of:)`).
    @inline(__always)
    func update(_ registers: inout [UInt8], with hash: Int64) {
        let (index, value) = parameters.register(of: hash)
        if registers[index] < value { registers[index] = value }
    }

    /// The number of non-zero registers.
    static func filledCount(_ registers: [UInt8]) -> Int {
        // Eight registers at a time: a byte's high bit ends up set exactly when the byte is zero.
        registers.withUnsafeBytes { bytes in
            let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
            var zeros = 0
            var offset = 0
            while offset + 8 <= bytes.count {
                let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                zeros += (~((word & low) &+ low | word | low)).nonzeroBitCount
                offset += 8
            }
            for byte in bytes[offset...] where byte == 0 { zeros += 1 }
            return bytes.count - zeros
        }
    }

    /// α_m · m², with the constants of the extension for 16, 32 and 64 registers.
    static func alphaMSquared(_ count: Int) -> Double {
        let m = Double(count)
        switch count {
        case 16: return 0.673 * m * m
        case 32: return 0.697 * m * m
        case 64: return 0.709 * m * m
        default: return (0.7213 / (1.0 + 1.079 / m)) * m * m
        }
    }
}

/// Why a sketch cannot be decoded or united: one sentence for the answer and the log.
public struct SketchError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension [Int64] {
    /// Where `value` is or would go in this ascending array.
    func insertionPoint(of value: Int64) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The union of two ascending arrays without duplicates, ascending.
    func sortedUnion(_ other: [Int64]) -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(count + other.count)
        var i = 0, j = 0
        while i < count || j < other.count {
            if j == other.count || (i < count && self[i] < other[j]) {
                result.append(self[i]); i += 1
            } else if i == count || other[j] < self[i] {
                result.append(other[j]); j += 1
            } else {
                result.append(self[i]); i += 1; j += 1
            }
        }
        return result
    }
}
