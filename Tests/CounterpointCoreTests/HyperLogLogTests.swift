import Foundation
import Generator
import Patience
import Testing
@testable import CounterpointCore

/// The listener sketch on its own: its bytes, its promotions, its unions and its estimates.
/// Byte-for-byte agreement with the real `hll` extension is in PostgresDBTests.
@Suite("HyperLogLog sketch in postgresql-hll's format", .onTestThreads)
struct HyperLogLogTests {
    static let neverExplicit = HyperLogLog.Parameters(log2Registers: 12, registerWidth: 5, explicitThreshold: 0, sparseEnabled: true)!

    /// Distinct random hashes, seeded.
    static func hashes(_ count: Int, seed: UInt64) -> [Int64] {
        var random = SeededRandom(seed: seed)
        var seen = Set<Int64>()
        while seen.count < count { seen.insert(Int64(bitPattern: random.next())) }
        return Array(seen)
    }

    static func sketch(_ hashes: some Sequence<Int64>, _ parameters: HyperLogLog.Parameters = .listeners) -> HyperLogLog {
        var sketch = HyperLogLog(parameters)
        for hash in hashes { sketch.add(hash: hash) }
        return sketch
    }

    /// A hash that sets register `index` to `value` (1…31) under 2^12 registers.
    static func hash(register index: Int, value: Int) -> Int64 {
        Int64(bitPattern: UInt64(1) << UInt64(12 + value - 1) | UInt64(index))
    }

    /// Bits written as a string of "0"s and "1"s, packed into bytes padded with zeros: an
    /// independent writer of the format's bit layout.
    static func packed(_ bits: String) -> [UInt8] {
        let padded = bits + String(repeating: "0", count: (8 - bits.count % 8) % 8)
        return stride(from: 0, to: padded.count, by: 8).map { start in
            UInt8(String(Array(padded)[start..<start + 8]), radix: 2)!
        }
    }

    static func binary(_ value: Int, width: Int) -> String {
        let digits = String(value, radix: 2)
        return String(repeating: "0", count: width - digits.count) + digits
    }

    @Test("an empty listener sketch is version 1 type empty, regwidth 5 and log2m 12, sparse on and the automatic threshold")
    func emptyHeader() {
        #expect(HyperLogLog().encoded == [0x11, 0x8C, 0x7F])
        #expect(HyperLogLog().cardinality == 0)
        #expect(HyperLogLog(Self.neverExplicit).encoded == [0x11, 0x8C, 0x40])
    }

    @Test("a sketch whose registers are so full that the large-range correction is undefined estimates 2^L · ln 2^L, not NaN")
    func saturatedEstimateIsFinite() throws {
        // Found by FuzzSketch: full representation, log2m 4, regwidth 3 (so L = 10), 16 registers
        // of 3 bits, nearly all at their largest value 7.
        let sketch = try HyperLogLog(decoding: [0x14, 0x44, 0x0D, 0xFF, 0xFF, 0xFF, 0xFF, 0xFD, 0xFD])
        #expect(sketch.cardinality == 1024 * log(1024.0))
        // Below the saturation the correction is postgresql-hll's, finite and larger than the raw estimate.
        var registers = try HyperLogLog(decoding: [0x14, 0x44, 0x0D, 0x92, 0x49, 0x24, 0x92, 0x49, 0x24])
        #expect(registers.cardinality.isFinite && registers.cardinality > 0)
        registers = try HyperLogLog(decoding: [0x14, 0x44, 0x0D, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(registers.cardinality == 1024 * log(1024.0))
    }

    @Test("a sparse sketch whose pairs are narrower than a byte decodes back from its own bytes when the padding is a pair wide")
    func sparsePaddingAsWideAsAPair() throws {
        // Found by FuzzSketch: log2m 5 and regwidth 2 make 7-bit pairs; seven registers fill 49
        // bits, so the seventh byte ends in 7 bits of padding, as wide as a pair.
        let parameters = try #require(HyperLogLog.Parameters(log2Registers: 5, registerWidth: 2, explicitThreshold: 0, sparseEnabled: true))
        var sketch = HyperLogLog(parameters)
        var filled = Set<Int>()
        var hash: Int64 = 1
        while filled.count < 7 {
            hash = hash &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let index = Int(UInt64(bitPattern: hash) & 31)
            if !filled.contains(index) && UInt64(bitPattern: hash) >> 5 != 0 { filled.insert(index); sketch.add(hash: hash) }
        }
        #expect(sketch.representation == .sparse)
        #expect(sketch.encoded.count == 3 + 7)
        #expect(try HyperLogLog(decoding: sketch.encoded) == sketch)
        // The fuzzer's input itself: a full sketch that re-encodes sparse in such bytes.
        let found = try HyperLogLog(decoding: [0x14, 0x25, 0x40, 0x08, 0x50, 0x00, 0x00, 0x00, 0xFE, 0x00, 0x00])
        #expect(try HyperLogLog(decoding: found.encoded) == found)
    }

    @Test("an explicit sketch is the hashes as 8-byte big-endian words in ascending signed order")
    func explicitBytes() {
        let sketch = Self.sketch([5, -2, 1 << 40, -2, 5])
        var expected: [UInt8] = [0x12, 0x8C, 0x7F]
        for word: UInt64 in [UInt64(bitPattern: -2), 5, 1 << 40] {
            expected += (0..<8).map { UInt8(truncatingIfNeeded: word >> UInt64(56 - 8 * $0)) }
        }
        #expect(sketch.encoded == expected)
        #expect(sketch.cardinality == 3 && sketch.isExact)
    }

    @Test("an explicit sketch holds 320 hashes, the automatic threshold of 2^12 five-bit registers, and the 321st makes it sparse")
    func explicitToSparse() {
        #expect(HyperLogLog.Parameters.listeners.explicitLimit == 320)
        let hashes = Self.hashes(321, seed: 1)
        let explicit = Self.sketch(hashes.prefix(320))
        #expect(explicit.representation == .explicit && explicit.cardinality == 320 && explicit.isExact)
        var promoted = explicit
        promoted.add(hash: hashes[320])
        #expect(promoted.representation == .sparse && !promoted.isExact)
        // Promotion keeps every hash: the same registers as hashes added without an explicit phase.
        #expect(promoted.encoded.dropFirst(3) == Self.sketch(hashes, Self.neverExplicit).encoded.dropFirst(3))
        // A hash already there changes nothing, at the limit too.
        var again = explicit
        again.add(hash: hashes[7])
        #expect(again == explicit)
    }

    @Test("sparse registers are written while their pairs take fewer bits than all registers: 1,204 filled are sparse, 1,205 full")
    func sparseToFull() throws {
        let below = Self.sketch((0..<1_204).map { Self.hash(register: $0 * 3, value: 1 + $0 % 31) }, Self.neverExplicit)
        #expect(below.representation == .sparse)
        #expect(below.encoded.count == 3 + (1_204 * 17 + 7) / 8)
        var at = below
        at.add(hash: Self.hash(register: 4_095, value: 2))
        #expect(at.representation == .full)
        #expect(at.encoded.count == 3 + 4_096 * 5 / 8)
        #expect(try HyperLogLog(decoding: at.encoded) == at)
        #expect(try HyperLogLog(decoding: below.encoded) == below)
        let noSparse = HyperLogLog.Parameters(log2Registers: 12, registerWidth: 5, explicitThreshold: 0, sparseEnabled: false)!
        #expect(Self.sketch([Self.hash(register: 1, value: 1)], noSparse).representation == .full)
    }

    @Test("sparse and full bits are laid out as the storage specification says: high bits first, zero padding at the end")
    func bitLayout() {
        let pairs = [(11, 6), (1_099, 19), (4_095, 31)]
        let sparse = Self.sketch(pairs.map { Self.hash(register: $0.0, value: $0.1) }, Self.neverExplicit)
        let sparseBits = pairs.map { Self.binary($0.0, width: 12) + Self.binary($0.1, width: 5) }.joined()
        #expect(sparse.encoded == [0x13, 0x8C, 0x40] + Self.packed(sparseBits))

        var filled = Self.sketch((0..<1_300).map { Self.hash(register: $0, value: 1 + $0 % 31) }, Self.neverExplicit)
        filled.add(hash: Self.hash(register: 0, value: 31))
        let fullBits = (0..<4_096).map { index in
            Self.binary(index == 0 ? 31 : index < 1_300 ? 1 + index % 31 : 0, width: 5)
        }.joined()
        #expect(filled.encoded == [0x14, 0x8C, 0x40] + Self.packed(fullBits))
    }

    @Test("register values are one plus the trailing zeros above the index bits, capped at 31; a zero remainder sets nothing")
    func registerValues() {
        #expect(Self.sketch([Int64(bitPattern: 1 << 63 | 7)], Self.neverExplicit).encoded
                == [0x13, 0x8C, 0x40] + Self.packed(Self.binary(7, width: 12) + Self.binary(31, width: 5)))
        #expect(Self.sketch([42], Self.neverExplicit).encoded == [0x13, 0x8C, 0x40])
    }

    @Test("every sketch decodes to itself and re-encodes to the same bytes", arguments: [0, 1, 2, 100, 320, 321, 700, 1_500, 5_000, 40_000])
    func roundTrips(count: Int) throws {
        for seed in 0..<5 as Range<UInt64> {
            let sketch = Self.sketch(Self.hashes(count, seed: seed * 1_000 + UInt64(count)))
            let decoded = try HyperLogLog(decoding: sketch.encoded)
            #expect(decoded == sketch)
            #expect(decoded.encoded == sketch.encoded)
            #expect(decoded.cardinality == sketch.cardinality)
        }
    }

    @Test("a union of any two representations is the sketch of all their hashes, in either order, and a union with itself changes nothing")
    func unionsOfEveryPair() throws {
        let sizes = [("empty", 0), ("explicit", 150), ("explicit", 250), ("sparse", 900), ("full", 20_000)]
        let sets = sizes.enumerated().map { Self.hashes($0.element.1, seed: 77 + UInt64($0.offset)) }
        for (i, first) in sets.enumerated() {
            for (j, second) in sets.enumerated() {
                // Overlap too: half of the second set again.
                let a = Self.sketch(first), b = Self.sketch(second + first.prefix(first.count / 2))
                let expected = Self.sketch(first + second)
                #expect(try a.union(b) == expected, "\(sizes[i].0) ∪ \(sizes[j].0)")
                #expect(try b.union(a) == expected, "\(sizes[j].0) ∪ \(sizes[i].0)")
                #expect(try a.union(b).encoded == expected.encoded)
                #expect(try a.union(a) == a)
            }
        }
        // Two explicit sketches within the limit stay explicit; past it they become registers.
        #expect(try Self.sketch(sets[1]).union(Self.sketch(sets[1].prefix(100))).representation == .explicit)
        #expect(try Self.sketch(sets[1]).union(Self.sketch(sets[2])).representation == .sparse)
    }

    @Test("uniting encoded sketches gives the bytes of the union of the decoded ones, a full sketch with explicit hashes included (changed in place)")
    func encodedUnions() throws {
        func united(_ a: [UInt8], _ b: [UInt8]) throws -> [UInt8] {
            var out: [UInt8] = [7] // appended to what the buffer holds
            try a.withUnsafeBytes { a in
                try b.withUnsafeBytes { b in try HyperLogLog.unite(encoded: a, b, into: &out) }
            }
            #expect(out.first == 7)
            return Array(out.dropFirst())
        }
        let sizes = [0, 1, 150, 320, 900, 1_500, 20_000]
        for (i, first) in sizes.enumerated() {
            for (j, second) in sizes.enumerated() {
                let a = Self.sketch(Self.hashes(first, seed: 500 + UInt64(i)))
                let b = Self.sketch(Self.hashes(second, seed: 600 + UInt64(j)))
                #expect(try united(a.encoded, b.encoded) == a.union(b).encoded, "\(first) ∪ \(second)")
            }
        }
        // Many full sketches, each with a flush's few hashes: registers raised from zero and from
        // lower values, hashes that change nothing, the first and the last register.
        for seed in 0..<50 as Range<UInt64> {
            let full = Self.sketch(Self.hashes(1_600 + Int(seed) * 97, seed: 700 + seed))
            #expect(full.representation == .full)
            var added = Self.hashes(Int(seed % 20), seed: 800 + seed)
            added += [Self.hash(register: 0, value: 1 + Int(seed % 31)), Self.hash(register: 4_095, value: 1 + Int(seed % 29))]
            let explicit = Self.sketch(added)
            #expect(try united(full.encoded, explicit.encoded) == full.union(explicit).encoded)
        }
        // Sparse sketches with a flush's hashes, merged pair by pair: new registers before,
        // between and after the stored ones, stored ones raised or not, two hashes for one
        // register, and unions that become full.
        for seed in 0..<50 as Range<UInt64> {
            let sparse = Self.sketch(Self.hashes(330 + Int(seed) * 19, seed: 1_000 + seed))
            #expect(sparse.representation == .sparse)
            let register = Int(seed * 83 % 4_096)
            var added = Self.hashes(Int(seed % 7) * 40, seed: 1_100 + seed)
            added += [Self.hash(register: 0, value: 1 + Int(seed % 5)), Self.hash(register: 4_095, value: 2),
                      Self.hash(register: register, value: 3), Self.hash(register: register, value: 1 + Int(seed % 30))]
            let explicit = Self.sketch(added)
            #expect(try united(sparse.encoded, explicit.encoded) == sparse.union(explicit).encoded, "seed \(seed)")
        }
        // Other register widths and counts, with and without sparse: eight registers are
        // `regwidth` bytes whatever it is.
        for width in 1...5 {
            for log2m in [4, 7, 11] {
                for sparseEnabled in [true, false] {
                    let parameters = HyperLogLog.Parameters(log2Registers: log2m, registerWidth: width, explicitThreshold: 16,
                                                            sparseEnabled: sparseEnabled)!
                    for count in [20, 60, 400, 5_000] {
                        let seed = UInt64(width * 1_000 + log2m * 10 + count)
                        let a = Self.sketch(Self.hashes(count, seed: seed), parameters)
                        let b = Self.sketch(Self.hashes(3, seed: seed + 1), parameters)
                        #expect(try united(a.encoded, b.encoded) == a.union(b).encoded, "\(parameters), \(count) hashes")
                    }
                }
            }
        }
        // Full bytes with fewer filled registers than the rule writes full (another writer's):
        // the union is re-encoded by the rule, as a decoded union would be.
        let few = Self.sketch(Self.hashes(500, seed: 900))
        guard case .registers(let registers) = few.contents else { Issue.record("not registers"); return }
        var fullBytes: [UInt8] = [1 << 4 | HyperLogLog.Representation.full.rawValue, few.encoded[1], few.encoded[2]]
        HyperLogLog.appendFull(registers, width: 5, to: &fullBytes)
        let explicit = Self.sketch(Self.hashes(10, seed: 901))
        #expect(try united(fullBytes, explicit.encoded) == few.union(explicit).encoded)
        #expect(try HyperLogLog(decoding: united(fullBytes, explicit.encoded)).representation == .sparse)
        // Malformed hashes are an error, as for a decoded union.
        #expect(throws: SketchError.self) { try united(Self.sketch(Self.hashes(2_000, seed: 902)).encoded, Array(explicit.encoded.dropLast())) }
    }

    @Test("sketches with different parameters are not united")
    func differentParameters() {
        #expect(throws: SketchError.self) { try HyperLogLog().union(HyperLogLog(Self.neverExplicit)) }
    }

    @Test("estimates are within the error of 2^12 registers of the exact count over many seeded sets")
    func estimates() {
        var errors: [Double] = []
        for count in [400, 1_000, 2_000, 5_000, 20_000, 100_000, 200_000] {
            for seed in 0..<8 as Range<UInt64> {
                let estimate = Self.sketch(Self.hashes(count, seed: 9_000 + seed * 31 + UInt64(count))).cardinality
                let error = abs(estimate - Double(count)) / Double(count)
                #expect(error < 0.066, "\(count) hashes (seed \(seed)): estimate \(estimate)") // four standard errors
                errors.append(error)
            }
        }
        let mean = errors.reduce(0, +) / Double(errors.count)
        #expect(mean < 0.02, "mean relative error \(mean)")
        // Up to the explicit limit the count is exact.
        for count in [1, 10, 320] { #expect(Self.sketch(Self.hashes(count, seed: 5)).cardinality == Double(count)) }
    }

    @Test("bytes that are not a sketch are a one-line error, never a crash", arguments: [
        [], [0x11, 0x8C], [0x21, 0x8C, 0x7F], [0x10, 0x8C, 0x7F], [0x15, 0x8C, 0x7F], [0x11, 0x8C, 0x7F, 0x00],
        [0x11, 0xAC, 0x7F], [0x11, 0x8C, 0xFF], [0x11, 0x8C, 0x68], [0x11, 0x83, 0x7F], [0x11, 0x92, 0x7F],
        [0x12, 0x8C, 0x7F, 1, 2, 3, 4, 5, 6, 7],
        [0x12, 0x8C, 0x7F, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1],
        [0x12, 0x8C, 0x7F, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2],
        [0x13, 0x8C, 0x40, 0x00, 0x00, 0x00], [0x13, 0x8C, 0x40, 0x00, 0x00, 0x80, 0x00], [0x13, 0x8C, 0x40, 0x00, 0x00, 0x81],
        [0x13, 0x8C, 0x40, 0x01, 0x63, 0x00, 0x2C, 0xC0], [0x13, 0x8C, 0x40, 0x01, 0x63, 0x01],
        [0x14, 0x8C, 0x40, 0x00],
    ] as [[UInt8]])
    func malformedBytes(bytes: [UInt8]) {
        #expect(throws: SketchError.self) { try HyperLogLog(decoding: bytes) }
    }

    @Test("more explicit hashes than the limit is an error; an explicit sketch without hashes reads as empty")
    func explicitLimits() throws {
        let tooMany = [UInt8]([0x12, 0x8C, 0x7F]) + (0..<321).flatMap { index -> [UInt8] in
            (0..<8).map { UInt8(truncatingIfNeeded: UInt64(index) >> UInt64(56 - 8 * $0)) }
        }
        #expect(throws: SketchError.self) { try HyperLogLog(decoding: tooMany) }
        #expect(try HyperLogLog(decoding: [0x12, 0x8C, 0x7F]) == HyperLogLog())
    }
}
