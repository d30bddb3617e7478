/// What became of the messages a `KafkaProducer` accepted, for load tests such as `replay`.
public struct DeliveryStatistics: Sendable {
    /// Messages `send` handed to librdkafka.
    public internal(set) var enqueued = 0
    /// Messages the cluster acknowledged.
    public internal(set) var delivered = 0
    /// Messages that failed for good, by librdkafka error name (such as `_MSG_TIMED_OUT`).
    public internal(set) var failuresByError: [String: Int] = [:]
    /// Time from `send` to the delivery report, for delivered messages, as librdkafka measures
    /// it (from its own enqueue timestamp, so no per-message clock read is added).
    public internal(set) var latency = LatencyHistogram()

    public var failed: Int { failuresByError.values.reduce(0, +) }
    /// Accepted but neither delivered nor failed yet.
    public var inFlight: Int { enqueued - delivered - failed }
}

/// A histogram of durations with about 3 % resolution, from 1 µs to hours, in fixed memory.
///
/// Values are kept in buckets of whole microseconds: below 64 µs one bucket per microsecond,
/// above that 32 buckets per power of two (the HdrHistogram layout with two significant digits).
public struct LatencyHistogram: Sendable {
    private static let subBuckets = 32
    private var counts = [UInt64](repeating: 0, count: subBuckets * 40)
    public private(set) var count = 0
    private var maximumMicroseconds: UInt64 = 0
    private var totalMicroseconds: UInt64 = 0

    public init() {}

    public mutating func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        record(microseconds: UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000))
    }

    mutating func record(microseconds: UInt64) {
        counts[min(Self.bucketIndex(microseconds: microseconds), counts.count - 1)] += 1
        count += 1
        totalMicroseconds &+= microseconds
        maximumMicroseconds = max(maximumMicroseconds, microseconds)
    }

    public var maximum: Duration { .microseconds(Int64(clamping: maximumMicroseconds)) }

    public var mean: Duration {
        count == 0 ? .zero : .microseconds(Int64(clamping: totalMicroseconds / UInt64(count)))
    }

    /// The smallest recorded bucket bound below which `fraction` (0…1) of the values lie, never above `maximum`.
    public func percentile(_ fraction: Double) -> Duration {
        guard count > 0 else { return .zero }
        let rank = UInt64(max(1, (fraction * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            seen += bucketCount
            if seen >= rank {
                return min(.microseconds(Int64(clamping: Self.upperBoundMicroseconds(ofBucket: index))), maximum)
            }
        }
        return maximum
    }

    private static func bucketIndex(microseconds value: UInt64) -> Int {
        guard value >= 2 * UInt64(subBuckets) else { return Int(value) }
        // Keep the 6 most significant bits (the mantissa, 32…63) and count the bits shifted out.
        let shift = (64 - value.leadingZeroBitCount) - 6
        return subBuckets * shift + Int(value >> UInt64(shift))
    }

    private static func upperBoundMicroseconds(ofBucket index: Int) -> UInt64 {
        guard index >= 2 * subBuckets else { return UInt64(index) }
        let shift = index / subBuckets - 1
        let mantissa = UInt64(index - subBuckets * shift)
        return ((mantissa + 1) << UInt64(shift)) - 1
    }
}
