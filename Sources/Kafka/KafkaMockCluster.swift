import CRdKafka
import Logging

/// librdkafka's in-process mock Kafka cluster, listening on loopback.
///
/// It speaks enough of the Kafka protocol for librdkafka, kcat and kafka-python to produce,
/// fetch and join consumer groups. Like a short retention, it keeps only about the newest
/// 5 MiB (or 100,000 message sets) of each partition and deletes older data. Joining a group
/// on it takes about 3 s. Destroying the object stops the brokers.
public final class KafkaMockCluster: @unchecked Sendable {
    // Safe to share: `bootstrapServers` is immutable, and librdkafka serialises the mock calls
    // (topic creation) on the cluster's own thread.
    private let cluster: OpaquePointer
    /// The mock cluster runs inside a client instance, which must outlive it.
    private let host: RDKafkaClient
    public let bootstrapServers: String

    public init(brokers: Int = 1, logger: Logger) throws(KafkaError) {
        let purpose = "starting mock Kafka cluster"
        // The host client never connects anywhere; without this it warns that it has no brokers.
        host = try RDKafkaClient(
            kind: .producer, properties: ["log_level": "4"],
            context: RDKafkaClientContext(logger: logger), purpose: purpose)
        guard let cluster = rd_kafka_mock_cluster_new(host.handle, Int32(clamping: brokers)) else {
            throw KafkaError(code: RD_KAFKA_RESP_ERR__FAIL, message: "librdkafka could not start the mock cluster", context: purpose)
        }
        self.cluster = cluster
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        logger.info("mock Kafka cluster started", metadata: ["kafka.bootstrap": "\(bootstrapServers)", "kafka.brokers": "\(brokers)"])
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
    }

    /// Creates a topic; producing to an unknown topic would otherwise auto-create it with the
    /// mock's default partition count.
    public func createTopic(_ name: String, partitions: Int, replicationFactor: Int = 1) throws(KafkaError) {
        try RDKafkaStatus.check(
            rd_kafka_mock_topic_create(cluster, name, Int32(clamping: partitions), Int32(clamping: replicationFactor)),
            "creating topic \(name) with \(partitions) partitions on the mock cluster")
    }
}
