import Kafka

/// The benchmarks' yardstick: a consume loop that only counts messages and touches their bytes,
/// as the cheapest real consumer would.
public final class CountingHandler: KafkaConsumerHandler, @unchecked Sendable {
    // Safe to share: written only on the consumer thread, read after `run` returns.
    let starts: [KafkaPartition: Int64]
    public private(set) var count = 0
    public private(set) var bytes = 0
    public private(set) var first: ContinuousClock.Instant?
    public private(set) var last: ContinuousClock.Instant?

    /// Starts each assigned partition at its offset in `starts`.
    public init(starts: [KafkaPartition: Int64]) { self.starts = starts }

    public func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] { starts }

    public func consume(_ batch: KafkaMessageBatch) throws {
        if first == nil { first = .now }
        for message in batch { bytes &+= message.value?.count ?? 0 }
        count += batch.count
        last = .now
    }
}
