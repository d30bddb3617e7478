import CounterpointCore
import CounterStore
import Runtime

/// One server thread's store connections, behind a lock that the thread holds while it
/// answers and that the janitor takes to end snapshots the thread left open when it went idle.
final class StoreSlot: Sendable {
    /// Touched by the owning server thread during a request or by the janitor between
    /// requests — never both at once.
    private let reader = Locked<CounterReader?>(nil)
    let store: StoreBackend
    let snapshotAge: Duration
    /// Point lookups put off to be answered together (`plays(track:in:round:receivedAt:)`), or nil when
    /// each is answered at once. Only the owning thread touches them.
    private let lookups: Locked<PendingLookups>?

    init(store: StoreBackend, snapshotAge: Duration, coalescesLookups: Bool) {
        self.store = store
        self.snapshotAge = snapshotAge
        lookups = coalescesLookups ? Locked(PendingLookups()) : nil
    }

    /// A point lookup: the merged plays of `subject` over `range` with the freshness they were
    /// read with — or, when a track's lookups are coalesced and this is the request's first round, nil:
    /// the lookup waits, and the request's next round (after the thread has served its other
    /// connections with data ready) answers it together with every lookup that waits then, in
    /// one snapshot and one statement per range (docs/postgresql.md). A request takes only an
    /// answer read since it was received (`receivedAt`), or within `snapshotAge`: never older
    /// than one it would have read itself.
    func plays(_ subject: Subject, in range: HourRange, round: Int, receivedAt: ContinuousClock.Instant) throws -> (TrackPlays, Freshness)? {
        guard let lookups, subject.kind == .track else { return try read { try $0.plays(subject, in: range) } }
        let key = PendingLookups.Key(track: subject.id, range: range)
        if round == 0 {
            lookups.withLock { $0.waiting.append(key) }
            return nil
        }
        let readSince = min(receivedAt, .now - snapshotAge)
        if let answer = lookups.withLock({ $0.take(key, readSince: readSince) }) { return answer }
        let batch = lookups.withLock { $0.takeWaiting(adding: key) }
        let readAt = ContinuousClock.now
        let answers = try withReader { try PendingLookups.read(batch, with: $0) }
        lookups.withLock { $0.keep(answers, readAt: readAt, for: batch.dropLast(), keptFor: max(snapshotAge, PendingLookups.minimumKeptAge)) }
        return answers[key]
    }

    /// What `body` reads with this thread's reader, and the freshness of the snapshots it read
    /// (the freshness an answer reports is that of the snapshots its counts came from).
    func read<T>(_ body: (CounterReader) throws -> T) throws -> (T, Freshness) {
        try withReader { reader in (try body(reader), reader.lastFreshness) }
    }

    /// Runs `body` with this thread's reader, opening it on first use, holding its snapshots
    /// for up to `snapshotAge` across requests (zero: one snapshot per query, as SQLite does
    /// by itself). After an error the reader releases its snapshots and is rebuilt next time.
    func withReader<T>(_ body: (CounterReader) throws -> T) throws -> T {
        try reader.withLock { reader in try Self.withReader(&reader, store: store, snapshotAge: snapshotAge, body) }
    }

    private static func withReader<T>(_ reader: inout CounterReader?, store: StoreBackend, snapshotAge: Duration,
                                      _ body: (CounterReader) throws -> T) throws -> T {
        let current = try reader ?? store.openReader()
        reader = current
        do {
            if let since = current.snapshotsHeldSince, ContinuousClock.now - since > snapshotAge {
                // Stale: ended and taken anew in one step.
                try current.renewSnapshots()
            } else if snapshotAge > .zero {
                try current.holdSnapshots()
            }
            return try body(current)
        } catch {
            current.releaseSnapshots()
            reader = nil
            throw error
        }
    }

    /// Ends snapshots older than `snapshotAge` unless the owning thread is answering right now
    /// (then it renews them itself).
    func releaseStaleSnapshots() {
        let snapshotAge = self.snapshotAge
        _ = reader.withLockIfAvailable { reader in
            if let reader, let since = reader.snapshotsHeldSince, ContinuousClock.now - since > snapshotAge {
                reader.releaseSnapshots()
            }
        }
    }
}

/// One server thread's point lookups waiting for their next round, and the answers read for
/// them, kept until their requests take them on the thread's next turn.
struct PendingLookups {
    struct Key: Hashable {
        var track: Int64
        var range: HourRange
    }

    typealias Answer = (plays: TrackPlays, freshness: Freshness)

    var waiting: [Key] = []
    /// Each answer with when it was read and how many waiting requests have yet to take it.
    private var answers: [Key: (answer: Answer, readAt: ContinuousClock.Instant, takers: Int)] = [:]

    /// How long an answer is kept for its requests at least, even when the reader takes a fresh
    /// snapshot for every query (`snapshotAge` 0): they take it on the thread's same turn.
    static let minimumKeptAge: Duration = .milliseconds(20)

    /// The answer of `key`'s lookup, if one was read for it at `since` or later. Each is taken
    /// by as many requests as it was read for: a request the client gave up on leaves its
    /// answer behind, and it goes when it is too old (`keep`).
    mutating func take(_ key: Key, readSince since: ContinuousClock.Instant) -> Answer? {
        guard let kept = answers[key], kept.readAt >= since else { return nil }
        if kept.takers > 1 { answers[key]?.takers -= 1 } else { answers[key] = nil }
        return kept.answer
    }

    /// Every lookup waiting but `key`'s, then `key`'s (waiting still, or not since a read that
    /// failed or whose answer grew too old), to be read now.
    mutating func takeWaiting(adding key: Key) -> [Key] {
        if let own = waiting.firstIndex(of: key) { waiting.remove(at: own) }
        defer { waiting.removeAll(keepingCapacity: true) }
        return waiting + [key]
    }

    /// Keeps the answers of a read that began at `readAt` for the waiting requests `takers` (one
    /// key per other request), beside those of earlier reads not yet taken; drops those older
    /// than `age`.
    mutating func keep(_ read: [Key: Answer], readAt: ContinuousClock.Instant, for takers: some Sequence<Key>, keptFor age: Duration) {
        let now = ContinuousClock.now
        answers = answers.filter { now - $0.value.readAt <= age }
        for key in takers {
            guard let answer = read[key] else { continue }
            // A request still to take an earlier answer of the same key takes this newer one.
            answers[key] = (answer, readAt, (answers[key]?.takers ?? 0) + 1)
        }
    }

    /// Reads `batch` in `reader`'s snapshot: one statement per distinct range.
    static func read(_ batch: [Key], with reader: CounterReader) throws -> [Key: Answer] {
        var answers: [Key: Answer] = [:]
        for (range, keys) in Dictionary(grouping: batch, by: \.range) {
            let plays = try reader.plays(tracks: keys.map(\.track), in: range)
            for (key, answer) in zip(keys, plays) { answers[key] = (answer, reader.lastFreshness) }
        }
        return answers
    }
}
