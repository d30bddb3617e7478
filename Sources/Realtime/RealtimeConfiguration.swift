import CounterStore
import Kafka
import Runtime

/// How the realtime consumer reads Kafka and flushes into the realtime store.
public struct RealtimeConfiguration: Sendable {
    /// `host:port[,host:port…]` of one or more brokers.
    public var bootstrapServers: String
    /// The store the counts and offsets are flushed into (SQLite files or PostgreSQL).
    public var store: StoreBackend
    /// The topic of the events (plays and the other signals). Default "plays".
    public var topic = "plays"
    /// The realtime layer's consumer group unless configured otherwise.
    public static let defaultGroup = "counterpoint-realtime"
    /// The consumer group; its members share the topic's partitions. Default "counterpoint-realtime".
    public var group = RealtimeConfiguration.defaultGroup
    /// How often counts and offsets are flushed in one transaction. Default 250 ms. A flush that
    /// takes longer than this delays the next one; counting goes on meanwhile.
    public var flushInterval: Duration = .milliseconds(250)
    /// Names this client in broker logs. Default "counterpoint-realtime".
    public var clientID = "counterpoint-realtime"
    /// Most messages handed over by one poll. Default 10,000.
    public var maxPollRecords = 10_000
    /// How long `RealtimeConsumer.init` waits for a broker before failing; nil skips the check. Default 10 s.
    public var connectTimeout: Duration? = .seconds(10)
    /// A member silent for this long is dropped from the group. Default 10 s.
    public var sessionTimeoutMilliseconds = 10_000
    /// Default nil: a third of the session timeout, at most 3 s (`KafkaConsumerConfiguration`).
    public var heartbeatIntervalMilliseconds: Int?
    /// How long the broker may hold a fetch that finds nothing new. Default 100 ms: a real broker
    /// answers as soon as events arrive, so this bounds only idle round trips. Use
    /// `KafkaMockCluster.consumerFetchWaitMaxMilliseconds` with the embedded broker, which waits it out.
    public var fetchWaitMaxMilliseconds = 100
    /// Rejected events kept as samples for `/v1/status` (the most recent ones). Default 20.
    public var rejectionSampleCapacity = 20
    /// Offset gaps kept for status (the most recent ones). Default 20.
    public var offsetGapCapacity = 20
    /// The window over which `RealtimeStatus.eventsPerSecond` is measured. Default 5 s.
    public var rateWindow: Duration = .seconds(5)
    /// How long after a failed flush (a full disk) the next one is tried; doubles with each
    /// failure in a row, up to `flushRetryMaximumDelay`. Default 500 ms.
    public var flushRetryDelay: Duration = .milliseconds(500)
    /// Default 10 s.
    public var flushRetryMaximumDelay: Duration = .seconds(10)
    /// Where the consumer reports itself degraded while its flushes fail, and running again
    /// once one commits; nil reports nowhere (the log and `status()` still say it).
    public var health: ComponentHealth.Handle?
    /// The operator's librdkafka properties (security, tuning), set after the ones the fields
    /// above make.
    public var kafkaOptions = KafkaClientOptions()
    /// Offsets the store kept of the topic from a broker that is gone (`run`'s embedded one),
    /// which the consumers ignore and their first flush forgets; nil (the default) for a broker
    /// whose offsets the store's are.
    public var earlierBrokerOffsets: EarlierBrokerOffsets?
    /// The embedded cluster at `bootstrapServers` (`run`'s), which each consumer then keeps
    /// until its Kafka client is gone (`KafkaConsumerConfiguration.embeddedCluster`); nil otherwise.
    public var embeddedCluster: KafkaMockCluster?
    /// "Now", as stored with each flush and shown with failures and offset gaps.
    public var clock = WallClock.system

    public init(bootstrapServers: String, store: StoreBackend) {
        self.bootstrapServers = bootstrapServers
        self.store = store
    }

    /// The one place these settings become the Kafka module's configuration.
    var consumerConfiguration: KafkaConsumerConfiguration {
        var consumer = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: group, topics: [topic])
        consumer.clientID = clientID
        consumer.maxPollRecords = maxPollRecords
        consumer.connectTimeout = connectTimeout
        consumer.sessionTimeoutMilliseconds = sessionTimeoutMilliseconds
        consumer.heartbeatIntervalMilliseconds = heartbeatIntervalMilliseconds
        consumer.fetchWaitMaxMilliseconds = fetchWaitMaxMilliseconds
        // Where the store has no offset: from the beginning, so that nothing produced before the
        // first start is missed. Where the store's offset is gone (retention): the oldest kept.
        consumer.autoOffsetReset = .earliest
        consumer.options = kafkaOptions
        consumer.embeddedCluster = embeddedCluster
        // Refused or lost connections show on the same board, beside the consumer's own entry.
        consumer.healthReport = health.map { KafkaHealthReport($0.handle(for: "\($0.name) Kafka connection")) }
        return consumer
    }
}
