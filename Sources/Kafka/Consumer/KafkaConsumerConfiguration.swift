/// How a `KafkaConsumer` joins its group and fetches.
///
/// Offsets are never committed to Kafka automatically: the caller keeps them (the realtime
/// layer stores them in SQLite with the counts; the archiver commits them with
/// `KafkaConsumer.commit` once its files are synced) and hands them back from
/// `KafkaConsumerHandler.assigned`.
public struct KafkaConsumerConfiguration: Sendable {
    /// Where to start a partition that the handler gives no offset for.
    public enum OffsetReset: String, Sendable {
        case earliest, latest
    }

    /// `host:port[,host:port…]` of one or more brokers.
    public var bootstrapServers: String
    /// The consumer group; partitions of `topics` are shared among its members.
    public var groupID: String
    public var topics: [String]
    /// Names this client in broker logs and metrics. Default "counterpoint".
    public var clientID = "counterpoint"
    /// A member silent for this long is dropped from the group. Default 10 s.
    public var sessionTimeoutMilliseconds = 10_000
    /// How often the member tells the group it is alive; must be well below the session
    /// timeout. Default nil: a third of it, as Kafka recommends, and at most 3 s.
    public var heartbeatIntervalMilliseconds: Int?
    /// Eager strategies, so every rebalance revokes everything before assigning. Default "range,roundrobin".
    public var partitionAssignmentStrategy = "range,roundrobin"
    /// Most messages handed to `KafkaConsumerHandler.consume` at once. Default 10,000.
    public var maxPollRecords = 10_000
    /// How long one poll waits for a first message before the handler's `idle` runs. Default 100 ms.
    public var pollTimeout = Duration.milliseconds(100)
    /// How long the broker may hold a fetch to gather `fetchMinBytes`. Default 100 ms.
    public var fetchWaitMaxMilliseconds = 100
    /// Default 1 byte: answer as soon as anything is there.
    public var fetchMinBytes = 1
    /// Most bytes fetched per partition per request. Default 1 MiB.
    public var maxPartitionFetchBytes = 1_048_576
    /// Most kilobytes prefetched and held in memory, all partitions together (they share the
    /// consumer's queue). Default 64 MiB: the bound on a consumer's backlog in memory.
    public var queuedMaxMessagesKilobytes = 65_536
    /// Most messages prefetched, all partitions together. Default 10,000,000 (librdkafka's
    /// maximum), so that `queuedMaxMessagesKilobytes` is the bound that counts: librdkafka 2.0
    /// stops fetching when either is reached and looks again only up to a second later, and
    /// its default of 100,000 — 20 MB of 200-byte events — stalled a consumer with a backlog
    /// for most of that second each time it drained them (docs/performance.md).
    public var queuedMinMessages = 10_000_000
    /// Where partitions without a start offset begin, and where librdkafka resumes when a
    /// start offset no longer exists on the broker (reported through `offsetReset`). Default earliest.
    public var autoOffsetReset = OffsetReset.earliest
    /// How long `KafkaConsumer.init` waits for a broker to answer before failing; nil skips the check.
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

    public init(bootstrapServers: String, groupID: String, topics: [String]) {
        self.bootstrapServers = bootstrapServers
        self.groupID = groupID
        self.topics = topics
    }

    /// The one place these settings become librdkafka properties.
    var librdkafkaProperties: [(String, String)] {
        let derived = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientID,
            "session.timeout.ms": String(sessionTimeoutMilliseconds),
            "heartbeat.interval.ms": String(heartbeatIntervalMilliseconds ?? min(3_000, sessionTimeoutMilliseconds / 3)),
            "partition.assignment.strategy": partitionAssignmentStrategy,
            "fetch.wait.max.ms": String(fetchWaitMaxMilliseconds),
            "fetch.min.bytes": String(fetchMinBytes),
            "max.partition.fetch.bytes": String(maxPartitionFetchBytes),
            "queued.max.messages.kbytes": String(queuedMaxMessagesKilobytes),
            "queued.min.messages": String(queuedMinMessages),
        ].merging(fixedProperties.map { ($0.name, $0.value) }) { $1 }
        return .librdkafka(derived, then: options)
    }

    /// What options may not change (`RDKafkaClient` checks): offsets are the caller's to keep or
    /// to commit explicitly, never behind its back; a partition without one starts where the
    /// caller said (earliest: a copied `auto.offset.reset=latest` skipped a new group's backlog
    /// unnoticed); the end of a partition is no message; and the group is the one the caller
    /// named (`run`'s realtime consumer and archiver are two groups: one `group.id` for both
    /// would split the events between them).
    var fixedProperties: [FixedProperty] {
        let offsets = "counterpoint commits offsets itself, and only once what they cover is durable"
        return [
            FixedProperty(name: "enable.auto.commit", value: "false", reason: offsets),
            FixedProperty(name: "enable.auto.offset.store", value: "false", reason: offsets),
            FixedProperty(name: "enable.partition.eof", value: "false", reason: "the end of a partition is not a message to the consumer"),
            FixedProperty(name: "auto.offset.reset", value: autoOffsetReset.rawValue,
                          reason: "a partition without a stored offset starts at its oldest event, so that none is skipped"),
            FixedProperty(name: "group.id", value: groupID,
                          reason: "each consumer's group is its --group (run's consumer and archiver need a group each)"),
        ]
    }
}
