import CRdKafka
import Logging
import Runtime

/// librdkafka's in-process mock Kafka cluster, listening on loopback.
///
/// It speaks enough of the Kafka protocol for librdkafka, kcat and kafka-python to produce,
/// fetch and join consumer groups. Like a short retention, it keeps only about the newest
/// 5 MiB (or 100,000 message sets) of each partition and deletes older data. Joining a group
/// on it takes about 3 s. Destroying the object stops the brokers: a client given it as
/// `embeddedCluster` holds it, so that it stops only after its last such client (`stopped`).
///
/// One thread serves every broker, and librdkafka 2.0 keeps each partition as a list of
/// message sets (one per produced batch) that every fetch searches from the oldest. A fetch
/// returns at most one message set per partition, and one that finds nothing is answered only
/// after the consumer's whole `fetch.wait.max.ms`. So its consumers should fetch with a short
/// wait (`consumerFetchWaitMaxMilliseconds`) and its producers should send few, large batches:
/// the more batches a partition holds, the slower every fetch. At 1,000 events/s over 16
/// partitions the thread is saturated after 90 s with 5 ms batches (`linger.ms`); after five
/// minutes it takes about 40 % of a core with 50 ms batches and 6 % with 200 ms ones.
/// Compression keeps more events within the 5 MiB, in more batches. None of this applies to a
/// real Kafka.
public final class KafkaMockCluster: @unchecked Sendable {
    // Safe to share: `bootstrapServers` is immutable, and librdkafka serialises the mock calls
    // (topic creation, faults) on the cluster's own thread.
    let cluster: OpaquePointer
    /// The mock cluster runs inside a client instance, which must outlive it.
    private let host: RDKafkaClient
    public let bootstrapServers: String
    /// How many brokers the cluster runs (ids 1 through this).
    public let brokers: Int

    /// The `fetch.wait.max.ms` for consumers of the mock. A real broker answers a fetch as soon
    /// as data arrives; the mock answers one that found nothing only after the whole wait, however
    /// much is produced meanwhile, so a consumer that has caught up would add up to that wait to
    /// the latency of the next events. Fetches at the end of the log cost the mock little.
    public static let consumerFetchWaitMaxMilliseconds = 10

    /// A `max.poll.interval.ms` for consumers of the mock that must not sit out a join it stops
    /// answering. librdkafka waits that long (plus 3 s) for an answer to JoinGroup, and the mock
    /// (librdkafka 2.0.2, `rdkafka_mock_cgrp.c`) never answers a member its session timer expired
    /// while it held a JoinGroup or SyncGroup request: the connection stays blocked. With the
    /// default 300 s a test's consumer sat there past every limit of a loaded full run; with
    /// this the request times out, the connection closes and the consumer joins again.
    public static let consumerMaxPollIntervalMilliseconds = 20_000

    /// Completes once the brokers have stopped: when nothing holds the cluster any more — its
    /// owner, and every client given it as `embeddedCluster` (each until its librdkafka instance
    /// is destroyed, which may come a moment after the last thread or task that used it ended).
    public let stopped = Completion<Void>()

    public init(brokers: Int = 1, logger: Logger) throws(KafkaError) {
        let purpose = "starting mock Kafka cluster"
        // The host client never connects anywhere; without this it warns that it has no brokers.
        host = try RDKafkaClient(
            kind: .producer, properties: [("log_level", "4")],
            context: RDKafkaClientContext(logger: logger), purpose: purpose)
        guard let cluster = rd_kafka_mock_cluster_new(host.handle, Int32(clamping: brokers)) else {
            throw KafkaError(code: RD_KAFKA_RESP_ERR__FAIL, message: "librdkafka could not start the mock cluster", context: purpose)
        }
        self.cluster = cluster
        self.brokers = max(1, brokers)
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        logger.info("mock Kafka cluster started", metadata: ["kafka.bootstrap": "\(bootstrapServers)", "kafka.brokers": "\(brokers)"])
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
        stopped.succeed()
    }

    /// Creates a topic; producing to an unknown topic would otherwise auto-create it with the
    /// mock's default partition count.
    public func createTopic(_ name: String, partitions: Int, replicationFactor: Int = 1) throws(KafkaError) {
        try RDKafkaStatus.check(
            rd_kafka_mock_topic_create(cluster, name, Int32(clamping: partitions), Int32(clamping: replicationFactor)),
            "creating topic \(name) with \(partitions) partitions on the mock cluster")
    }
}
