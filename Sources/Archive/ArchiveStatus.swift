import CounterpointCore

/// What the archiver has done so far, for `/v1/status` and for tests. Counts are since start.
public struct ArchiveStatus: Sendable, Equatable {
    /// The partitions of the archived topic this archiver holds now.
    public var assignedPartitions: [Int32] = []
    /// Hours with files but no closed marker yet, ascending.
    public var openHours: [Hour] = []
    /// The newest hour this archiver has closed.
    public var lastClosedHour: Hour?
    /// The stream time (see `Archiver`), epoch milliseconds; nil before it is known.
    public var streamTimeMilliseconds: Int64?
    /// Valid events written (to hour files and late files).
    public var eventsArchived = 0
    /// Of those, events written to late files because their hour was already closed.
    public var lateEvents = 0
    /// Messages that are not valid events, written to the hour file of their Kafka timestamp
    /// for `batch` to count as rejected.
    public var invalidMessages = 0
    /// Null values (tombstones) and values of only whitespace: nothing to archive, and a
    /// blank line is not an event for `batch` either.
    public var skippedMessages = 0
    /// Hours closed by this archiver.
    public var closedHours = 0
    /// Jumps in a partition's offsets that the broker's retention explains: those messages
    /// were never archived, and only the realtime layer may have counted them.
    public var offsetResets: [String] = []
    /// Messages those jumps skipped, over every reset: the archive lacks them, so a batch
    /// rebuild of their hours would count less than the realtime layer did.
    public var gapSkippedMessages: Int64 = 0
    /// The offsets last committed to Kafka, per partition: everything before them is on disk.
    public var committedOffsets: [Int32: Int64] = [:]
    /// Wall-clock time of the last successful commit, epoch milliseconds.
    public var lastCommitMilliseconds: Int64?
    /// Whether the consumer loop is running.
    public var isRunning = false

    public init() {}
}
