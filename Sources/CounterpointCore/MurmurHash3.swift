/// MurmurHash3 x64-128 (Austin Appleby's public-domain algorithm) of one 64-bit integer, as
/// postgresql-hll's `hll_hash_bigint(value, seed)` computes it: the integer's eight bytes in
/// little-endian order are the key, and the hash is the first 64 bits of the 128-bit result.
/// Listener ids go through it before they reach a sketch (docs/listeners.md).
public enum MurmurHash3 {
    public static func hashBigint(_ value: Int64, seed: UInt32 = 0) -> Int64 {
        let c1: UInt64 = 0x87C3_7B91_1142_53D5
        let c2: UInt64 = 0x4CF5_AD43_2745_937F
        var h1 = UInt64(seed)
        var h2 = UInt64(seed)
        // Eight bytes: no 16-byte block, only the first half of the tail.
        var k1 = UInt64(bitPattern: value)
        k1 &*= c1
        k1 = (k1 << 31) | (k1 >> 33)
        k1 &*= c2
        h1 ^= k1
        // Finalization, with the key's length.
        h1 ^= 8
        h2 ^= 8
        h1 &+= h2
        h2 &+= h1
        h1 = finalMix(h1)
        h2 = finalMix(h2)
        h1 &+= h2
        return Int64(bitPattern: h1)
    }

    /// Murmur3's 64-bit finalizer (fmix64): every input bit reaches every output bit. Also how
    /// the hash tables of the domain and the batch job's source fingerprints finish a hash.
    @inlinable @inline(__always)
    public static func finalMix(_ value: UInt64) -> UInt64 {
        var k = value
        k ^= k >> 33
        k &*= 0xFF51_AFD7_ED55_8CCD
        k ^= k >> 33
        k &*= 0xC4CE_B9FE_1A85_EC53
        k ^= k >> 33
        return k
    }
}
