import CounterStore
import Runtime

/// Where the realtime consumer is in each partition of its topic, and the one rule for going
/// back: a pure state machine (no broker, no store, no clock of its own) whose methods return
/// the seeks the caller performs.
///
/// Each assigned partition has the next offset the store holds (`stored`: where everything
/// not yet committed starts) and the next offset after what was consumed since. A flush
/// carries both; a committed flush moves `stored` forward; a fenced or failed flush rewinds
/// every partition to what the store holds (`rewind`), because the counts since the last
/// commit — one table for all partitions — are dropped. When the store could not be read after
/// a failed flush, the rewind goes to this consumer's own view, which the store may no longer
/// share (it lost commits in a crash, or failed over to a standby behind): those partitions are
/// `unconfirmed`, and the next flush carries them even with nothing new, so that the store's
/// fence confirms their offsets or sends them back. A partition assigned while the store
/// could not say where it starts waits (`awaitingStoredOffset`): its messages are skipped
/// until `resolveStoredOffsets` seeks it to the stored offset, so a rebalance callback never
/// sleeps on a store that is down.
///
/// Only the consumer's polling thread uses it.
struct PartitionLedger {
    /// A partition the caller must move so that its next message is `offset`.
    struct Seek: Hashable {
        var partition: Int32
        var offset: Int64
    }

    /// Where this consumer is in one partition.
    struct Position: Equatable {
        var isAssigned = false
        /// Assigned, but the store has not yet said where to start: its messages are skipped.
        var awaitingStoredOffset = false
        /// The next offset as the store holds it (as last read or committed by this consumer).
        /// nil when the store has none for the partition.
        var stored: Int64?
        /// After the last message consumed; nil when none since assignment or a rewind.
        var consumed: Int64?
        /// With nothing stored, the first offset seen: where to read again from after a rewind.
        var firstSeen: Int64?
        /// `stored` is this consumer's own view after a failed flush, not yet confirmed by the store.
        var unconfirmed = false

        /// Where a flush would leave it: after what was consumed, else where the store has it.
        var next: Int64? { consumed ?? stored }

        /// Whether a flush must carry it: consumed past the stored offset, or that offset is
        /// unconfirmed (then with nothing new: start and next offsets equal).
        var needsFlush: Bool {
            guard let next else { return false }
            return next != stored || unconfirmed
        }
    }

    /// The retry of a read of stored offsets that failed while partitions were assigned.
    private struct OffsetsRetry {
        var backoff: Backoff
        var at: ContinuousClock.Instant
        var giveUpAt: ContinuousClock.Instant
    }

    /// Indexed by partition id.
    private(set) var positions: [Position] = []
    private var offsetsRetry: OffsetsRetry?
    private let retryBackoff: Backoff

    /// `retryBackoff`: how the read of stored offsets is tried again while the store fails; it
    /// gives up once failures have lasted the backoff's maximum.
    init(retryBackoff: Backoff) {
        self.retryBackoff = retryBackoff
    }

    // MARK: Assignment

    /// Takes `partitions` on. With the store's offsets, returns where each starts (partitions
    /// the store has none for start where the consumer's reset policy says). Without them (the
    /// store failed), returns no starts and marks the partitions as waiting for them.
    mutating func assign(_ partitions: [Int32], stored: [Int32: Int64]?, now: ContinuousClock.Instant) -> [Int32: Int64] {
        var starts: [Int32: Int64] = [:]
        for id in partitions {
            grow(to: Int(id))
            positions[Int(id)] = Position(isAssigned: true, awaitingStoredOffset: stored == nil, stored: stored?[id])
            if let start = stored?[id] { starts[id] = start }
        }
        if stored == nil, !partitions.isEmpty, offsetsRetry == nil {
            var backoff = retryBackoff
            let delay = backoff.failed()
            offsetsRetry = OffsetsRetry(backoff: backoff, at: now + delay, giveUpAt: now + retryBackoff.maximum)
        }
        return starts
    }

    mutating func revoke(_ partitions: [Int32]) {
        for id in partitions where Int(id) < positions.count {
            positions[Int(id)] = Position()
        }
        if !positions.contains(where: \.awaitingStoredOffset) { offsetsRetry = nil }
    }

    var assigned: [Int32] {
        positions.indices.filter { positions[$0].isAssigned }.map { Int32($0) }
    }

    // MARK: Consuming (the hot path: once per run of one partition's messages)

    /// The first message of a run of `partition`'s messages is at `offset`; returns false when
    /// the run must be skipped: the partition waits for its stored offset, or is not assigned
    /// (the Kafka consumer never hands such a message over; were one counted, no flush would
    /// carry its offset, and its partition's owner would count it too).
    @inline(__always)
    mutating func begin(_ partition: Int, at offset: Int64) -> Bool {
        guard partition < positions.count, positions[partition].isAssigned else { return false }
        if positions[partition].stored == nil && positions[partition].firstSeen == nil {
            positions[partition].firstSeen = offset
        }
        return !positions[partition].awaitingStoredOffset
    }

    /// Messages of `partition` were consumed up to `next` (the offset after the last one).
    @inline(__always)
    mutating func consumed(_ partition: Int, upTo next: Int64) {
        positions[partition].consumed = next
    }

    // MARK: Flushing

    /// What a flush of everything consumed so far would store, partition by partition, with
    /// the summed lag behind `highWatermark`; `anyAssigned` says whether lag means anything.
    func progress(topic: String, highWatermark: (Int32) -> Int64?) -> (partitions: [PartitionProgress], lag: Int64, anyAssigned: Bool) {
        var progress: [PartitionProgress] = []
        var lag: Int64 = 0
        var anyAssigned = false
        for id in positions.indices where positions[id].isAssigned {
            anyAssigned = true
            let position = positions[id]
            let high = highWatermark(Int32(id))
            if let high, let next = position.next { lag += max(0, high - next) }
            guard position.needsFlush, let next = position.next else { continue }
            progress.append(PartitionProgress(topic: topic, partition: Int32(id), startOffset: position.stored,
                                              nextOffset: next, highWatermark: high))
        }
        return (progress, lag, anyAssigned)
    }

    /// Whether a flush has something to store: messages consumed since the last one, or an
    /// offset the store has yet to confirm.
    var hasUnflushedProgress: Bool {
        positions.contains { $0.isAssigned && $0.needsFlush }
    }

    /// A flush of `progress` committed: the store holds those offsets now.
    mutating func committed(_ progress: [PartitionProgress]) {
        for partition in progress where Int(partition.partition) < positions.count {
            positions[Int(partition.partition)].stored = partition.nextOffset
            positions[Int(partition.partition)].unconfirmed = false
        }
    }

    /// A flush was fenced or failed, and every count since the last commit is dropped: each
    /// assigned partition goes back to what the store holds (`stored`, as read right after;
    /// nil when that read failed too: then to what this consumer last read or committed, left
    /// unconfirmed until a flush carries it). Returns the seeks that make consumption start
    /// there again.
    mutating func rewind(to stored: [Int32: Int64]?) -> [Seek] {
        var seeks: [Seek] = []
        for id in positions.indices where positions[id].isAssigned && !positions[id].awaitingStoredOffset {
            let old = positions[id]
            let now = stored.map { $0[Int32(id)] } ?? old.stored
            // The first offset seen is kept: a store that failed over to a standby which had not
            // received this partition's first commit has nothing stored for it again.
            positions[id] = Position(isAssigned: true, stored: now, firstSeen: old.firstSeen,
                                     unconfirmed: stored == nil && now != nil)
            // Untouched since its start, at an unchanged offset, it is where it should be.
            guard old.consumed != nil || now != old.stored, let restart = now ?? old.firstSeen else { continue }
            seeks.append(Seek(partition: Int32(id), offset: restart))
        }
        return seeks
    }

    // MARK: Stored offsets for waiting partitions

    /// Whether partitions wait for their stored offsets and the next read of them is due.
    func storedOffsetsDue(at now: ContinuousClock.Instant) -> Bool {
        guard let offsetsRetry else { return false }
        return now >= offsetsRetry.at
    }

    /// The store answered: the waiting partitions start where it says (or, with nothing
    /// stored, where the reset policy put them: the first offset seen). Returns the seeks.
    mutating func resolveStoredOffsets(_ stored: [Int32: Int64]) -> [Seek] {
        offsetsRetry = nil
        var seeks: [Seek] = []
        for id in positions.indices where positions[id].awaitingStoredOffset {
            let firstSeen = positions[id].firstSeen
            let start = stored[Int32(id)]
            positions[id] = Position(isAssigned: true, stored: start, firstSeen: firstSeen)
            if let offset = start ?? firstSeen { seeks.append(Seek(partition: Int32(id), offset: offset)) }
        }
        return seeks
    }

    /// The read failed again. Returns the delay before the next one, or nil when the failures
    /// have lasted too long (the caller stops: a store that stays down should stop it).
    mutating func storedOffsetsFailed(at now: ContinuousClock.Instant) -> Duration? {
        guard var retry = offsetsRetry else { return nil }
        let delay = retry.backoff.failed()
        guard now + delay <= retry.giveUpAt else { return nil }
        retry.at = now + delay
        offsetsRetry = retry
        return delay
    }

    private mutating func grow(to partition: Int) {
        if partition >= positions.count {
            positions.append(contentsOf: repeatElement(Position(), count: partition + 1 - positions.count))
        }
    }
}
