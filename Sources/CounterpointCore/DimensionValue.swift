/// A `client` or `country` value as sent (docs/event-format.md: at most 32 bytes of UTF-8, after
/// unescaping), stored inline — four words and a length, zero-padded — so that the parser can
/// hand one over, and the aggregation hash and compare it, without touching the heap.
public struct DimensionValue: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let maxLength = 32

    @usableFromInline typealias Words = (UInt64, UInt64, UInt64, UInt64)

    /// The bytes, in memory order, unused bytes zero (so `==` may compare whole words).
    @usableFromInline var words: Words = (0, 0, 0, 0)
    public private(set) var count: UInt8 = 0

    /// Copies `count` (≤ 32) bytes at `source`.
    @inline(__always)
    public init(copying source: UnsafeRawPointer, count: Int) {
        precondition(count >= 0 && count <= Self.maxLength, "a dimension value has at most 32 bytes")
        if count <= 8 {
            // Most values ("ios", "DE") fit one word: assembling it beats a call to memmove per value.
            var word: UInt64 = 0
            for index in 0..<count {
                word |= UInt64(source.load(fromByteOffset: index, as: UInt8.self)) << UInt64(8 * index)
            }
            words.0 = UInt64(littleEndian: word)
        } else {
            withUnsafeMutableBytes(of: &words) { $0.baseAddress!.copyMemory(from: source, byteCount: count) }
        }
        self.count = UInt8(count)
    }

    /// The `count` (≤ 8) bytes of `word`'s low lanes (little-endian), the others zero.
    @inline(__always)
    init(lowBytesOf word: UInt64, count: Int) {
        words.0 = UInt64(littleEndian: count == 8 ? word : word & ((1 << UInt64(8 &* count)) &- 1))
        self.count = UInt8(count)
    }

    /// `nil` when `text` is longer than 32 bytes.
    public init?(_ text: String) {
        var copy = text
        guard let value = copy.withUTF8({ bytes -> DimensionValue? in
            guard bytes.count <= Self.maxLength else { return nil }
            return bytes.count == 0 ? DimensionValue() : DimensionValue(copying: bytes.baseAddress!, count: bytes.count)
        }) else { return nil }
        self = value
    }

    /// The empty string (a valid value: docs/event-format.md sets no minimum length).
    public init() {}

    public static func == (a: DimensionValue, b: DimensionValue) -> Bool {
        a.count == b.count && a.words.0 == b.words.0 && a.words.1 == b.words.1
            && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hashWord)
    }

    /// A cheap mix of the words, for the aggregation's own tables.
    @inline(__always)
    var hashWord: UInt64 {
        var hash = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
        hash = (hash ^ words.0) &* 0xFF51_AFD7_ED55_8CCD
        hash = (hash ^ words.1) &* 0xC4CE_B9FE_1A85_EC53
        hash = (hash ^ words.2) &* 0xFF51_AFD7_ED55_8CCD
        hash = (hash ^ words.3) &* 0xC4CE_B9FE_1A85_EC53
        return hash ^ (hash >> 29)
    }

    /// Ascending by UTF-8 bytes (docs/openapi.yaml's tie order): words compared as big-endian numbers
    /// order by their first differing byte; zero padding makes a prefix sort first, and the
    /// length separates a value from itself followed by NUL bytes.
    public static func < (a: DimensionValue, b: DimensionValue) -> Bool {
        // Memory order is little-endian: byte-swapping puts the first byte most significant.
        if a.words.0 != b.words.0 { return a.words.0.byteSwapped < b.words.0.byteSwapped }
        if a.words.1 != b.words.1 { return a.words.1.byteSwapped < b.words.1.byteSwapped }
        if a.words.2 != b.words.2 { return a.words.2.byteSwapped < b.words.2.byteSwapped }
        if a.words.3 != b.words.3 { return a.words.3.byteSwapped < b.words.3.byteSwapped }
        return a.count < b.count
    }

    public func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(count)))) }
    }

    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// The value as text (it is valid UTF-8: the parser rejects anything else).
    public var string: String { withBytes { String(decoding: $0, as: UTF8.self) } }

    public var description: String { string }
}
