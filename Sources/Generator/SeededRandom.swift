#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A small, fast, seedable pseudo-random generator: xoshiro256** (Blackman and Vigna), seeded
/// through SplitMix64. Foundation's generators cannot be seeded, and generated logs must be
/// byte-for-byte reproducible from `GeneratorConfiguration.seed`.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    public init(seed: UInt64) {
        var splitMix = seed
        func nextSplitMix() -> UInt64 {
            splitMix &+= 0x9E37_79B9_7F4A_7C15
            return SeededRandom.mix(splitMix)
        }
        state = (nextSplitMix(), nextSplitMix(), nextSplitMix(), nextSplitMix())
    }

    @inline(__always)
    public mutating func next() -> UInt64 {
        let result = rotateLeft(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotateLeft(state.3, 45)
        return result
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    @inline(__always)
    public mutating func nextUnitInterval() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Uniform in `0..<bound` (Lemire's multiply-shift; the tiny bias for huge bounds does not
    /// matter for synthetic data, and it keeps the stream one draw per value).
    @inline(__always)
    public mutating func next(below bound: Int) -> Int {
        Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// The SplitMix64 finalizer: a bijection on 64-bit values that scrambles its input well.
    @inline(__always)
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    @inline(__always)
    private func rotateLeft(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}

/// Draws ranks `1…count` with probability proportional to `1 / rank^exponent` (Zipf), by binary
/// search in the precomputed cumulative distribution: O(log count) per draw, and exact.
public final class ZipfSampler: Sendable {
    public let count: Int
    public let exponent: Double
    private let cumulative: [Double]

    public init(count: Int, exponent: Double) {
        precondition(count >= 1 && exponent >= 0, "Zipf needs at least one rank and a non-negative exponent")
        self.count = count
        self.exponent = exponent
        var running = 0.0
        var cumulative = [Double](repeating: 0, count: count)
        for rank in 1...count {
            running += 1 / pow(Double(rank), exponent)
            cumulative[rank - 1] = running
        }
        self.cumulative = cumulative.map { $0 / running }
    }

    /// The probability of `rank`, for tests and summaries.
    public func probability(of rank: Int) -> Double {
        cumulative[rank - 1] - (rank > 1 ? cumulative[rank - 2] : 0)
    }

    @inline(__always)
    public func sample(_ random: inout SeededRandom) -> Int {
        let target = random.nextUnitInterval()
        var low = 0, high = count - 1
        while low < high {
            let middle = (low + high) >> 1
            if cumulative[middle] > target { high = middle } else { low = middle + 1 }
        }
        return low + 1
    }
}
