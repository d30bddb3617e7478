/// One rejected event kept for inspection (README.md): why, where from, and what it looked like.
public struct RejectedSample: Sendable, Hashable {
    public var reason: RejectReason
    /// `file.ndjson:123` (file and line) or `plays/3@4567` (topic/partition@offset).
    public var source: String
    /// The first `RejectionLog.payloadPrefixBytes` bytes of the event; bytes that are not
    /// UTF-8 are replaced by U+FFFD.
    public var payloadPrefix: String
    public var message: String

    public init(reason: RejectReason, source: String, payloadPrefix: String, message: String) {
        self.reason = reason
        self.source = source
        self.payloadPrefix = payloadPrefix
        self.message = message
    }
}

/// Rejected events counted by reason, with a bounded sample of them, as the consumer and the
/// batch job keep them (README.md).
///
/// Counts are always exact. The sample keeps the **first** `sampleCapacity` rejections by
/// default, so a batch rerun over the same logs shows the same sample; a long-running
/// consumer may choose `.latest` to show what is going wrong now.
public struct RejectionLog: Sendable {
    /// Which rejections the bounded sample keeps.
    public enum SampleRetention: Sendable {
        /// The first ones recorded; later ones are only counted.
        case first
        /// The most recent ones; the oldest sample makes room for a new one.
        case latest
    }

    public static let payloadPrefixBytes = 200

    public let sampleCapacity: Int
    public let retention: SampleRetention
    public private(set) var counts: [RejectReason: Int] = [:]
    /// Oldest first.
    public private(set) var samples: [RejectedSample] = []

    public init(sampleCapacity: Int = 20, retention: SampleRetention = .first) {
        self.sampleCapacity = max(0, sampleCapacity)
        self.retention = retention
    }

    /// All rejections recorded, over every reason.
    public var total: Int { counts.values.reduce(0, +) }

    public var isEmpty: Bool { counts.isEmpty }

    /// Counts `rejection`, and keeps it as a sample if the sample has room for it;
    /// `source` is only evaluated then.
    public mutating func record(_ rejection: EventRejection, source: @autoclosure () -> String,
                                payload: UnsafeRawBufferPointer) {
        counts[rejection.reason, default: 0] += 1
        guard wantsSample else { return }
        keep(RejectedSample(reason: rejection.reason, source: source(),
                            payloadPrefix: Self.payloadPrefix(payload), message: rejection.message))
    }

    /// Adds the counts of `other`, and its samples as far as the retention allows (for
    /// `.first`, `other`'s samples come after this log's; for `.latest`, they are newer).
    public mutating func merge(_ other: RejectionLog) {
        counts.merge(other.counts, uniquingKeysWith: +)
        for sample in other.samples {
            guard wantsSample else { break }
            keep(sample)
        }
    }

    /// Adds the counts of every log in `parts`, and their samples as far as the retention
    /// allows, taken in the order of their keys across all parts — `keys[i]` is the key of
    /// `log.samples[i]`. Logs filled by parallel workers merge this way into the one log a
    /// single reader would have recorded, whichever worker finished first. Returns the keys
    /// of the samples kept, in their order. For a log that keeps the first samples.
    @discardableResult
    public mutating func merge<Key: Comparable>(_ parts: [(log: RejectionLog, keys: [Key])]) -> [Key] {
        precondition(retention == .first, "an ordered merge keeps the first samples")
        var keyed: [(key: Key, sample: RejectedSample)] = []
        for part in parts {
            counts.merge(part.log.counts, uniquingKeysWith: +)
            precondition(part.keys.count == part.log.samples.count, "a key for each sample")
            keyed += zip(part.keys, part.log.samples).map { ($0, $1) }
        }
        keyed.sort { $0.key < $1.key }
        var kept: [Key] = []
        for entry in keyed {
            guard wantsSample else { break }
            keep(entry.sample)
            kept.append(entry.key)
        }
        return kept
    }

    /// Whether `record` would keep its rejection as a sample.
    public var wantsSample: Bool {
        sampleCapacity > 0 && (retention == .latest || samples.count < sampleCapacity)
    }

    private mutating func keep(_ sample: RejectedSample) {
        if samples.count == sampleCapacity { samples.removeFirst() }
        samples.append(sample)
    }

    /// The first bytes of `payload` as text, cut at a character boundary where possible.
    static func payloadPrefix(_ payload: UnsafeRawBufferPointer) -> String {
        var length = min(payload.count, payloadPrefixBytes)
        if length < payload.count {
            // Do not split a multi-byte character: back off over at most three continuation bytes.
            var backedOff = 0
            while backedOff < 3 && length > 0 && payload[length] & 0xC0 == 0x80 {
                length -= 1
                backedOff += 1
            }
            if backedOff == 3 || length == 0 { length = min(payload.count, payloadPrefixBytes) }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: payload.prefix(length)), as: UTF8.self)
    }
}
