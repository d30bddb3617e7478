/// How a `KafkaProducer` talks to Kafka. Defaults favour throughput with full durability.
public struct KafkaProducerConfiguration: Sendable {
    /// Compression codecs librdkafka 2.0 supports.
    public enum Compression: String, Sendable {
        case none, gzip, snappy, lz4, zstd
    }

    /// `host:port[,host:port…]` of one or more brokers.
    public var bootstrapServers: String
    /// Names this client in broker logs and metrics. Default "counterpoint".
    public var clientID = "counterpoint"
    /// How long to wait for more messages before sending a batch. Default 5 ms.
    public var lingerMilliseconds = 5
    /// Maximum bytes per partition batch. Default 1 MiB.
    public var batchSizeBytes = 1_048_576
    /// Default none; lz4 is the cheap choice when the network, not the CPU, limits.
    public var compression = Compression.none
    /// "all" (default), "1" or "0": how many replicas must have a message before it counts as delivered.
    public var acks = "all"
    /// Messages waiting for delivery before `send` applies backpressure. Default 100,000 (about 30 MB of 200-byte messages).
    public var queueBufferingMaxMessages = 100_000
    /// How long a message may wait for delivery before it fails. Default 5 minutes.
    public var messageTimeoutMilliseconds = 300_000
    /// How long `KafkaProducer.init` waits for a broker to answer before failing; nil skips the check.
    /// Default 10 s.
    public var connectTimeout: Duration? = .seconds(10)
    /// The operator's librdkafka properties (security, tuning), set after the ones derived
    /// above, so they override them.
    public var options = KafkaClientOptions()
    /// Where the client reports that its cluster refuses or cannot be reached (see
    /// `KafkaHealthReport`); nil reports only in the log. Default nil.
    public var healthReport: KafkaHealthReport?
    /// The embedded cluster at `bootstrapServers`, when it is one: the client holds it until its
    /// librdkafka instance is destroyed, so that the cluster stops only after its last client
    /// (a client that outlives it logs every broker down). Default nil.
    public var embeddedCluster: KafkaMockCluster?

    public init(bootstrapServers: String) {
        self.bootstrapServers = bootstrapServers
    }

    /// The one place these settings become librdkafka properties.
    var librdkafkaProperties: [(String, String)] {
        let derived = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientID,
            "linger.ms": String(lingerMilliseconds),
            "batch.size": String(batchSizeBytes),
            "compression.codec": compression.rawValue,
            "acks": acks,
            "queue.buffering.max.messages": String(queueBufferingMaxMessages),
            "message.timeout.ms": String(messageTimeoutMilliseconds),
            // The same key lands on the same partition as with Java clients and kafka-python.
            "partitioner": "murmur2_random",
        ]
        return .librdkafka(derived, then: options)
    }
}
