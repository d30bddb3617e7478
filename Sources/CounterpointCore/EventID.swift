/// The `event_id` of an event: 1–64 bytes of `[A-Za-z0-9_-]`, the key the batch job
/// de-duplicates by.
///
/// The bytes are stored inline (eight words and a length, zero-padded), so creating, copying,
/// hashing and comparing one never touches the heap: the batch job does all four per event.
public struct EventID: Hashable, Sendable, CustomStringConvertible {
    public static let maxLength = 64

    @usableFromInline
    typealias Words = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    /// The bytes, little-endian in each word, unused bytes zero (so `==` may compare them all).
    @usableFromInline var words: Words
    @usableFromInline var length: UInt8

    @inlinable
    init(words: Words, length: UInt8) {
        self.words = words
        self.length = length
    }

    /// Validates `text` against the `event_id` rule; `nil` when it breaks it.
    public init?(_ text: String) {
        var copy = text
        guard let id = copy.withUTF8({ EventID(validating: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = id
    }

    /// Validates raw bytes against the `event_id` rule; `nil` when they break it.
    public init?(validating bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return nil }
        self.init(validating: base, count: bytes.count)
    }

    /// Validates and copies `count` bytes at `source`.
    @inline(__always)
    init?(validating source: UnsafeRawPointer, count: Int) {
        guard count >= 1 && count <= EventID.maxLength && EventID.allAllowed(source, count: count) else { return nil }
        self.init(copying: source, count: count)
    }

    /// Copies `count` (1…64) bytes at `source` that the caller has found allowed.
    @inline(__always)
    init(copying source: UnsafeRawPointer, count: Int) {
        var words: Words = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.baseAddress!.copyMemory(from: source, byteCount: count) }
        self.init(words: words, length: UInt8(count))
    }

    /// Whether each of `count` bytes at `source` is one of `[A-Za-z0-9_-]`.
    @inline(__always)
    static func allAllowed(_ source: UnsafeRawPointer, count: Int) -> Bool {
        for index in 0..<count where !isAllowed(source.load(fromByteOffset: index, as: UInt8.self)) { return false }
        return true
    }

    /// `[A-Za-z0-9_-]` as a 128-bit set: bits 45 ('-') and 48–57 in the low word,
    /// 65–90, 95 ('_') and 97–122 in the high word.
    @inline(__always)
    static func isAllowed(_ byte: UInt8) -> Bool {
        let low: UInt64 = 0x03FF_2000_0000_0000
        let high: UInt64 = 0x07FF_FFFE_87FF_FFFE
        guard byte < 128 else { return false }
        let word = byte < 64 ? low : high
        return (word >> UInt64(byte & 63)) & 1 == 1
    }

    /// Number of bytes, 1…64.
    @inlinable
    public var count: Int { Int(length) }

    public var text: String {
        Swift.withUnsafeBytes(of: words) { String(decoding: $0.prefix(Int(length)), as: UTF8.self) }
    }

    public var description: String { text }

    /// Calls `body` with the identifier's bytes (valid only inside `body`).
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(length)))) }
    }

    @inlinable
    public static func == (lhs: EventID, rhs: EventID) -> Bool {
        let l = lhs.words, r = rhs.words
        let difference = (l.0 ^ r.0) | (l.1 ^ r.1) | (l.2 ^ r.2) | (l.3 ^ r.3)
            | (l.4 ^ r.4) | (l.5 ^ r.5) | (l.6 ^ r.6) | (l.7 ^ r.7)
        return difference == 0 && lhs.length == rhs.length
    }

    /// Feeds only the words in use: a 26-character ULID costs four words, not eight.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(length)
        Swift.withUnsafeBytes(of: words) { raw in
            let usedWords = (Int(length) &+ 7) >> 3
            for index in 0..<usedWords {
                hasher.combine(raw.load(fromByteOffset: index &* 8, as: UInt64.self))
            }
        }
    }
}
