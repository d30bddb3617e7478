import CounterpointCore
import EventLogs
import Kafka
import Logging
import Runtime

/// `counterpoint archive`: writes every event of a Kafka topic, as received, into event-log
/// files partitioned by the event's UTC hour (`LogLayout`) — the files `batch` reads.
///
/// - **Files**: an event goes to `<root>/<YYYY-MM-DD>/<HH>.p<partition>.ndjson` of its
///   `occurred_at` hour, one segment per Kafka partition. A value is written byte for byte,
///   except that raw line breaks become tabs, which keeps its meaning (`ArchivedLine`).
///   A message that is not a valid event goes to the file of its Kafka timestamp's hour, where
///   the batch run covering that hour counts it as rejected; tombstones and blank values are
///   skipped (and counted), since a blank line is no event for `batch` either.
/// - **Closing hours**: the stream time is the newest `occurred_at` consumed, held back by any
///   assigned partition that still has a backlog (`StreamClock`). An hour closes once the
///   stream time has passed its end plus `allowedLateness`: its files are fsynced and closed,
///   then its `<HH>.closed` marker is written. An event that arrives for a closed hour goes to
///   `<HH>.late.p<partition>.ndjson`, which `batch` reads with the hour, so the next batch run
///   of that hour counts it. Hours left open by an earlier run are adopted at start.
/// - **Compression**: a closed hour's files are then gzipped on a thread of their own
///   (`ArchiveCompressor`), each into `<name>.gz`, the plain file deleted only once the gzip is
///   complete and durable (`LogCompression`); at start, leftovers of a crash in between are
///   cleaned up and plain files of closed hours are compressed. Late files stay plain.
/// - **At-least-once**: every `commitInterval`, before partitions are revoked and when stopping,
///   every open file is fsynced and only then are the next offsets committed to Kafka, in the
///   archiver's own group. A restart resumes at the committed offsets, so a crash repeats at
///   most the events since the last commit — `batch` de-duplicates them — and loses none. A
///   line torn by the crash is ended before appending, becoming one malformed line.
/// - **Several archivers** in one group on one log root split the partitions and never write
///   the same file, but each closes hours by its own partitions' stream time: one may mark an
///   hour closed while another still writes events of it to the hour's files (not late files).
///   Nothing is lost — a batch rerun of the hour reads them — but the marker came early. Run
///   one archiver per log root for exact markers.
///
/// A file that cannot be written (a full disk) ends the archiver with that error and commits
/// nothing after it; `run` and `archive` then make a new one after a delay (`ComponentService`),
/// which resumes at the last commit once there is space again.
public final class Archiver: JobComponent {
    public let configuration: ArchiverConfiguration
    private let consumer: KafkaConsumer
    private let shared: SharedArchiveStatus
    /// The archiving loop's thread: `start` starts it; it ends by `stop` or by a failure (a
    /// fatal Kafka error, an unwritable disk), which `ended` then carries. `stop` wakes the
    /// consumer, which leaves its group: every file is fsynced and closed and the last offsets
    /// committed; it waits for that, then rethrows the loop's failure, if any. Safe to call more
    /// than once, and before `start` (then it only prevents the start). A second start changes nothing.
    public let job: BlockingJob<Void>
    private let logger: Logger

    /// Checks the configuration, that the log root can be written (made if missing) and that a
    /// broker answers (within the consumer's `connectTimeout`).
    public init(configuration: ArchiverConfiguration, logger: Logger) throws {
        guard configuration.consumer.topics.count == 1 else {
            throw ArchiverError.invalidConfiguration("the archiver archives exactly one topic, not \(configuration.consumer.topics)")
        }
        guard configuration.allowedLateness >= .zero else {
            throw ArchiverError.invalidConfiguration("the allowed lateness must not be negative")
        }
        guard configuration.commitInterval > .zero else {
            throw ArchiverError.invalidConfiguration("the commit interval must be positive")
        }
        guard !configuration.logRoot.isEmpty else {
            throw ArchiverError.invalidConfiguration("the log root must not be empty")
        }
        do {
            try LogLayout.prepareWritableRoot(configuration.logRoot)
        } catch {
            throw ArchiverError.invalidConfiguration("the log directory cannot be written: \(error)")
        }
        self.configuration = configuration
        self.logger = logger
        let consumer = try KafkaConsumer(configuration: configuration.consumer, logger: logger)
        self.consumer = consumer
        let shared = SharedArchiveStatus()
        self.shared = shared
        job = BlockingJob(name: "archiver", stackSize: 1 << 22) { stop in
            try Self.archive(until: stop, consumer: consumer, configuration: configuration, status: shared, logger: logger)
        }
    }

    /// A snapshot of the archiver's progress. Any thread.
    public func status() -> ArchiveStatus {
        shared.current
    }

    /// The archiving loop: runs until `stop` is requested or a failure, which it throws.
    private static func archive(until stop: StopSignal, consumer: KafkaConsumer, configuration: ArchiverConfiguration,
                                status shared: SharedArchiveStatus, logger: Logger) throws {
        logger.info("archiver started", metadata: [
            "archive.topic": "\(configuration.topic)", "archive.group": "\(configuration.consumer.groupID)",
            "archive.logs": "\(configuration.logRoot)", "archive.allowed_lateness": "\(configuration.allowedLateness)",
        ])
        let compressor = configuration.compressClosedHours ? ArchiveCompressor(logger: logger) : nil
        compressor?.start()
        defer { compressor?.stop() }
        let files = ArchiveFiles(root: configuration.logRoot, bufferSize: configuration.writeBufferBytes,
                                 compressor: compressor, quietPeriod: configuration.allowedLateness)
        do {
            try files.adoptUnclosedHours()
        } catch {
            logger.error("archiver cannot read its log root", metadata: ["archive.error": "\(error)"])
            throw error
        }
        let handler = ArchiveHandler(consumer: consumer, files: files, configuration: configuration, status: shared, logger: logger)
        do {
            try consumer.run(until: stop, handler: handler)
            handler.finish()
            logger.info("archiver stopped", metadata: ["archive.events": "\(handler.eventsArchived)"])
        } catch {
            handler.abandon()
            logger.error("archiver failed", metadata: ["archive.error": "\(error)"])
            throw error
        }
    }
}

/// Why an archiver could not be created.
public enum ArchiverError: Error, CustomStringConvertible, Equatable {
    case invalidConfiguration(String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let message): message
        }
    }
}
