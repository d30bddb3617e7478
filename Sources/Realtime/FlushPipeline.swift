import CounterpointCore
import CounterStore
import Runtime

/// The double-buffered hand-off of counts to the store thread: `start` hands the tables over
/// and counting goes on into the spare pair (the last flush's tables, emptied on the store
/// thread); at most one flush is in flight, and `settle` takes up its outcome. Each flush may
/// be followed, in its own transaction, by a compaction of covered hours (`CompactionCadence`).
///
/// A polling thread that has caught up (`isCaughtUp`) waits in its poll, not for the flush:
/// the flush's end wakes that poll (`wake`), so whichever comes first — a new message or the
/// end of the flush — is taken up at once, and the next flush starts the moment this one ends.
///
/// Only the consumer's polling thread uses it.
struct FlushPipeline {
    /// A flush taken up by `settle`.
    struct Settled {
        var progress: [PartitionProgress]
        /// The store's `FlushOutcome` (committed, or fenced: nothing written), or why the store
        /// rolled the flush back (a full disk, an I/O error).
        var outcome: Result<FlushOutcome, any Error>
        /// The store's offsets, read right after a flush that did not commit; nil after a commit
        /// or when that read failed as well.
        var storedOffsets: [Int32: Int64]?
        var rows: Int
        var plays: Int64
        var duration: Duration
        var flushedAt: Int64
        /// Realtime rows of covered hours deleted after the flush, or why that failed (nil: none tried).
        var compactedRows: Result<Int, any Error>?
    }

    private struct InFlight {
        var progress: [PartitionProgress]
        var ticket: Completion<Report>
    }

    /// What the store thread sends back.
    private struct Report: Sendable {
        var settled: UncheckedSettled
        var emptied: TablesHandOff
    }

    private let store: StoreThread
    private let topic: String
    private let clock: WallClock
    /// Makes the polling thread's waiting poll return (any thread).
    private let wake: @Sendable () -> Void
    /// Shared with the store thread, which wakes the poll at the end of a flush while it is set.
    private let caughtUp = Locked(false)
    /// The polling thread's copy of `caughtUp`, its only writer: the lock is taken on a change,
    /// not on every batch.
    private var caughtUpCopy = false
    private var inFlight: InFlight?
    private var spare: CountTables?
    private var compaction = CompactionCadence()

    init(store: StoreThread, topic: String, clock: WallClock, wake: @escaping @Sendable () -> Void) {
        self.store = store
        self.topic = topic
        self.clock = clock
        self.wake = wake
    }

    /// No flush in flight.
    var isIdle: Bool { inFlight == nil }

    /// Whether the polling thread has read everything there was (its last poll found nothing):
    /// set it before looking at the flush in flight, so that a flush ending after the look
    /// wakes the next poll. Cleared when messages come in.
    var isCaughtUp: Bool {
        get { caughtUpCopy }
        set {
            guard newValue != caughtUpCopy else { return }
            caughtUpCopy = newValue
            caughtUp.set(newValue)
        }
    }

    /// Hands `tables` and `progress` to the store thread and leaves the spare tables (emptied)
    /// in their place.
    mutating func start(_ tables: inout CountTables, progress: [PartitionProgress], now: ContinuousClock.Instant) {
        precondition(inFlight == nil, "one flush at a time")
        let handOff = TablesHandOff(tables)
        tables = spare ?? CountTables()
        spare = nil
        let flushedAt = clock.epochMilliseconds()
        let (topic, compact, maxCompactedRows) = (topic, compaction.isDue(at: now), CompactionCadence.rowsPerFlush)
        let (caughtUp, wake) = (caughtUp, wake)
        let ticket = store.start({ store in
            let started = ContinuousClock.now
            var rowCount = 0
            let outcome = Result { () throws -> FlushOutcome in
                let rows = try handOff.tables.rows()
                rowCount = rows.reduce(0) { $0 + $1.rowCount }
                return try store.apply(rows, progress: progress, flushedAt: flushedAt)
            }
            let duration = ContinuousClock.now - started
            let failed = if case .failure = outcome { true } else { false }
            let stored = (try? outcome.get()) == .committed ? nil : try? store.storedOffsets(topic: topic)
            // Compaction runs after the flush, in its own transaction: the flush is never held
            // back by it, and a failed compaction (a full disk, say) is reported apart, so it can
            // never pass for a failed flush whose counts would be read again.
            let compacted = compact && !failed
                ? Result { try store.compactCoveredHours(maxRows: maxCompactedRows) } : nil
            let plays = handOff.tables.events.tracks.counts.totalPlays
            handOff.tables.removeAll()
            let settled = Settled(progress: progress, outcome: outcome, storedOffsets: stored, rows: rowCount,
                                  plays: plays, duration: duration, flushedAt: flushedAt, compactedRows: compacted)
            return Report(settled: UncheckedSettled(value: settled), emptied: handOff)
        }, then: {
            if caughtUp.value { wake() }
        })
        inFlight = InFlight(progress: progress, ticket: ticket)
    }

    /// The outcome of the flush in flight, once it has one (`waiting` for it or not).
    mutating func settle(waiting: Bool) -> Settled? {
        guard let flight = inFlight else { return nil }
        let outcome = waiting ? flight.ticket.wait() : flight.ticket.finished
        guard let result = outcome else { return nil }
        inFlight = nil
        // The job never throws; a stopped store thread does (the consumer is stopping).
        guard case .success(let report) = result else {
            return Settled(progress: flight.progress, outcome: .failure(RealtimeError.stopped("the store thread has stopped")),
                           storedOffsets: nil, rows: 0, plays: 0, duration: .zero, flushedAt: 0, compactedRows: nil)
        }
        spare = report.emptied.tables
        if let compacted = report.settled.value.compactedRows { compaction.finished(compacted) }
        return report.settled.value
    }
}

/// Moves the tables to the store thread and back without copying them.
private final class TablesHandOff: @unchecked Sendable {
    // Safe to share: the polling thread gives the tables up when it creates this box; from then
    // on only the store thread touches them, until the box comes back in the flush's report.
    var tables: CountTables

    init(_ tables: CountTables) {
        self.tables = tables
    }
}

/// Carries a flush's outcome (whose error need not be `Sendable`-checked) back to the polling thread.
private struct UncheckedSettled: @unchecked Sendable {
    // @unchecked: made on the store thread, read once on the polling thread after the ticket completes.
    var value: FlushPipeline.Settled
}
