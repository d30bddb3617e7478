import Kafka
import Runtime

/// What `counterpoint archive` consumes and where it writes.
public struct ArchiverConfiguration: Sendable {
    /// The archiver's own consumer group, apart from the realtime layer's, so each keeps its own progress.
    public static let defaultGroupID = "counterpoint-archive"

    /// How the archiver joins its group. `topics` holds exactly the one topic archived; the
    /// group's committed offsets in Kafka are the archiver's progress.
    public var consumer: KafkaConsumerConfiguration
    /// The root of the event-log layout (`LogLayout`) that `batch` reads.
    public var logRoot: String
    /// How long after an hour's end events of that hour are still expected: the hour closes
    /// once the stream time (see `Archiver`) has passed its end plus this. Default 10 minutes —
    /// longer than the usual client buffering and producer retries, short enough for a batch
    /// run each hour to pick up the hour before last.
    public var allowedLateness: Duration = .seconds(600)
    /// How often written events are fsynced and their offsets committed. Default 1 s: after
    /// a crash at most about this much is archived twice (the batch de-duplicates it).
    public var commitInterval: Duration = .seconds(1)
    /// Buffer per open file. Default 256 KiB: an archiver keeps about (open hours × partitions)
    /// files open.
    public var writeBufferBytes = 256 << 10
    /// Whether a closed hour's files are gzipped (off the consumer's thread, crash-safely:
    /// see `LogCompression`). Default on: NDJSON shrinks about 5× even at gzip level 1.
    public var compressClosedHours = true
    /// "Now": the stream time never passes it, so it bounds the hours the archiver closes, and
    /// it stamps each commit in the status.
    public var clock = WallClock.system

    public init(bootstrapServers: String, topic: String = "plays", groupID: String = ArchiverConfiguration.defaultGroupID,
                logRoot: String) {
        consumer = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: groupID, topics: [topic])
        self.logRoot = logRoot
    }

    public var topic: String { consumer.topics.first ?? "" }
}
