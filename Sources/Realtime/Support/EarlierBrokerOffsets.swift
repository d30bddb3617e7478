import CounterStore
import Logging
import Runtime

/// Offsets the realtime store kept of `topic` from a broker that is gone: `run`'s embedded
/// broker is made anew, empty, at every start, so what an earlier run stored points into a
/// topic that no longer exists. Left there, a consumer would skip the new topic's first events
/// up to them, or find its log shorter and go back.
///
/// Until they are forgotten, the consumers of the process read no stored offsets of the topic
/// (each partition starts at its first event), and the first flush forgets them just before it
/// commits. On a full disk that write fails and is retried like the flush itself, so nothing
/// is lost and the process still starts. One value per process, shared by its consumers in
/// turn: a consumer made again after a failure must not forget what the one before committed.
public final class EarlierBrokerOffsets: Sendable {
    public let topic: String
    private let pending = Locked(true)

    public init(topic: String) {
        self.topic = topic
    }

    var arePending: Bool { pending.withLock { $0 } }

    /// Forgets them in `writer` if that was not done yet; returns how many partitions had one.
    func forgetIfPending(in writer: any RealtimeWriter) throws -> Int? {
        try pending.withLock { pending in
            guard pending else { return nil }
            let forgotten = try writer.forgetOffsets(topic: topic)
            pending = false
            return forgotten
        }
    }
}

/// The realtime writer of a consumer whose broker is new (`EarlierBrokerOffsets`).
final class WriterForgettingEarlierOffsets: RealtimeWriter {
    private let writer: any RealtimeWriter
    private let earlier: EarlierBrokerOffsets
    private let logger: Logger

    init(_ writer: any RealtimeWriter, forgetting earlier: EarlierBrokerOffsets, logger: Logger) {
        self.writer = writer
        self.earlier = earlier
        self.logger = logger
    }

    func apply(_ rows: [CounterRows], progress: [PartitionProgress], flushedAt: Int64) throws -> FlushOutcome {
        if let forgotten = try earlier.forgetIfPending(in: writer), forgotten > 0 {
            logger.info("the broker is new: the realtime store's offsets from an earlier run are forgotten, its counts kept",
                        metadata: ["kafka.topic": "\(earlier.topic)", "kafka.partitions": "\(forgotten)"])
        }
        return try writer.apply(rows, progress: progress, flushedAt: flushedAt)
    }

    /// Still reads the store, so that a store that is down fails here as it would without
    /// the earlier offsets (and the partitions wait for it, see `PartitionLedger`).
    func storedOffsets(topic: String) throws -> [Int32: Int64] {
        let stored = try writer.storedOffsets(topic: topic)
        return topic == earlier.topic && earlier.arePending ? [:] : stored
    }

    func forgetOffsets(topic: String) throws -> Int {
        try writer.forgetOffsets(topic: topic)
    }

    func compactCoveredHours(maxRows: Int) throws -> Int {
        try writer.compactCoveredHours(maxRows: maxRows)
    }
}
