import CounterStore
@testable import Realtime
import Patience
import Runtime
import Testing

/// The partition ledger alone: no broker, no store, the clock handed in.
@Suite("The realtime consumer's partition ledger", .onTestThreads)
struct PartitionLedgerTests {
    static let backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(10))
    let start = ContinuousClock.now

    /// Consumes `partition` from `first` up to `next` as one run of messages.
    static func consume(_ ledger: inout PartitionLedger, _ partition: Int, from first: Int64, upTo next: Int64) -> Bool {
        guard ledger.begin(partition, at: first) else { return false }
        ledger.consumed(partition, upTo: next)
        return true
    }

    @Test("assigned partitions start at the store's offsets; those without one start where the reset policy says")
    func assignmentStartsAtStoredOffsets() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        let starts = ledger.assign([0, 1, 2], stored: [0: 40, 2: 7], now: start)
        #expect(starts == [0: 40, 2: 7])
        #expect(ledger.assigned == [0, 1, 2])
        #expect(!ledger.hasUnflushedProgress)
    }

    @Test("a flush carries each partition's stored and consumed offsets, and its commit moves the stored ones")
    func flushProgressAndCommit() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        _ = ledger.assign([0, 1, 2], stored: [0: 40], now: start)
        let step1 = Self.consume(&ledger, 0, from: 40, upTo: 45)
        #expect(step1)
        let step2 = Self.consume(&ledger, 1, from: 0, upTo: 3)
        #expect(step2)
        let (progress, lag, anyAssigned) = ledger.progress(topic: "plays") { $0 == 0 ? 50 : nil }
        #expect(anyAssigned)
        #expect(lag == 5)
        #expect(progress == [
            PartitionProgress(topic: "plays", partition: 0, startOffset: 40, nextOffset: 45, highWatermark: 50),
            PartitionProgress(topic: "plays", partition: 1, startOffset: nil, nextOffset: 3, highWatermark: nil),
        ])
        ledger.committed(progress)
        #expect(!ledger.hasUnflushedProgress)
        #expect(ledger.progress(topic: "plays") { _ in nil }.partitions.isEmpty)
    }

    @Test("messages of a partition not held — revoked, or never assigned — are skipped, since no flush could carry their offsets")
    func unheldPartitionsAreSkipped() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        _ = ledger.assign([0, 1], stored: [0: 40, 1: 10], now: start)
        _ = Self.consume(&ledger, 0, from: 40, upTo: 45)
        ledger.committed(ledger.progress(topic: "plays") { _ in nil }.partitions)
        ledger.revoke([0, 1])
        let afterRevoke = Self.consume(&ledger, 0, from: 45, upTo: 46)
        let neverAssigned = Self.consume(&ledger, 5, from: 0, upTo: 1)
        #expect(!afterRevoke && !neverAssigned)
        #expect(!ledger.hasUnflushedProgress)
        // Assigned again, the partition counts from the store's offset as before.
        _ = ledger.assign([0], stored: [0: 45], now: start)
        let reassigned = Self.consume(&ledger, 0, from: 45, upTo: 46)
        #expect(reassigned)
        #expect(ledger.progress(topic: "plays") { _ in nil }.partitions
            == [PartitionProgress(topic: "plays", partition: 0, startOffset: 45, nextOffset: 46, highWatermark: nil)])
    }

    @Test("a fenced flush rewinds every consumed partition to the offsets the store holds now")
    func fenceRewindsToTheStore() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        _ = ledger.assign([0, 1, 2], stored: [0: 40, 1: 10, 2: 5], now: start)
        _ = Self.consume(&ledger, 0, from: 40, upTo: 45)
        _ = Self.consume(&ledger, 1, from: 10, upTo: 12)
        // Another consumer committed partition 1 up to 30 meanwhile; partition 2 was not touched by anyone.
        let seeks = ledger.rewind(to: [0: 40, 1: 30, 2: 5])
        #expect(Set(seeks) == [.init(partition: 0, offset: 40), .init(partition: 1, offset: 30)])
        #expect(!ledger.hasUnflushedProgress)
        let progress = ledger.progress(topic: "plays") { _ in nil }.partitions
        #expect(progress.isEmpty)
        _ = Self.consume(&ledger, 1, from: 30, upTo: 31)
        #expect(ledger.progress(topic: "plays") { _ in nil }.partitions.map(\.startOffset) == [30])
    }

    @Test("a failed flush whose stored offsets cannot be read rewinds to what this consumer last read or committed")
    func failedFlushRewindsToOwnView() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        _ = ledger.assign([0, 1], stored: [0: 40], now: start)
        _ = Self.consume(&ledger, 0, from: 40, upTo: 45)
        _ = Self.consume(&ledger, 1, from: 100, upTo: 120)
        let seeks = ledger.rewind(to: nil)
        // Partition 1 has nothing stored: it is read again from the first offset it saw.
        #expect(Set(seeks) == [.init(partition: 0, offset: 40), .init(partition: 1, offset: 100)])
        _ = Self.consume(&ledger, 1, from: 100, upTo: 101)
        let rewound = ledger.rewind(to: nil)
        #expect(rewound == [.init(partition: 1, offset: 100)])
    }

    @Test("a partition whose committed offset the store lost (a failover to a standby behind) is read again from its first offset")
    func storeForgotTheCommit() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        _ = ledger.assign([0], stored: [:], now: start)
        _ = Self.consume(&ledger, 0, from: 5, upTo: 9)
        ledger.committed(ledger.progress(topic: "plays") { _ in nil }.partitions)
        _ = Self.consume(&ledger, 0, from: 9, upTo: 12)
        let seeks = ledger.rewind(to: [:])
        #expect(seeks == [.init(partition: 0, offset: 5)])
    }

    @Test("after a failed flush the store could not be read, the next flush has the store confirm every offset even with nothing new")
    func unconfirmedOffsetsGoWithTheNextFlush() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        _ = ledger.assign([0, 1, 2], stored: [0: 40, 1: 10], now: start)
        _ = Self.consume(&ledger, 0, from: 40, upTo: 45)
        ledger.committed(ledger.progress(topic: "plays") { _ in nil }.partitions)
        // Caught up and committed: nothing to flush. Then a flush fails (the primary is lost)
        // and the store cannot be read: the consumer's view of 45 and 10 is all it has.
        #expect(!ledger.hasUnflushedProgress)
        let seeks = ledger.rewind(to: nil)
        #expect(seeks == [.init(partition: 0, offset: 45)])
        #expect(ledger.hasUnflushedProgress)
        // Partition 2 has nothing stored and nothing consumed: there is nothing to confirm.
        #expect(ledger.progress(topic: "plays") { _ in nil }.partitions == [
            PartitionProgress(topic: "plays", partition: 0, startOffset: 45, nextOffset: 45, highWatermark: nil),
            PartitionProgress(topic: "plays", partition: 1, startOffset: 10, nextOffset: 10, highWatermark: nil),
        ])
        // The store (a promoted standby) has partition 0 at 42 only: the flush is fenced, and
        // the rewind to what it holds reads 42..<45 again.
        #expect(ledger.rewind(to: [0: 42, 1: 10]) == [.init(partition: 0, offset: 42)])
        #expect(!ledger.hasUnflushedProgress)
        // Had the store confirmed them instead, nothing would be carried again.
        _ = ledger.rewind(to: nil)
        ledger.committed(ledger.progress(topic: "plays") { _ in nil }.partitions)
        #expect(!ledger.hasUnflushedProgress)
        #expect(ledger.progress(topic: "plays") { _ in nil }.partitions.isEmpty)
    }

    @Test("partitions assigned while the store fails are skipped until it answers, then sought to its offsets")
    func awaitingStoredOffsets() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        let starts = ledger.assign([0, 1], stored: nil, now: start)
        #expect(starts.isEmpty)
        #expect(ledger.assigned == [0, 1])
        let step3 = Self.consume(&ledger, 0, from: 0, upTo: 9)
        #expect(!step3, "messages before the stored offset is known are skipped")
        let step4 = Self.consume(&ledger, 1, from: 0, upTo: 9)
        #expect(!step4)
        #expect(!ledger.hasUnflushedProgress)
        #expect(!ledger.storedOffsetsDue(at: start), "the first retry waits the backoff's initial delay")
        #expect(ledger.storedOffsetsDue(at: start + .milliseconds(500)))
        let failed408 = ledger.storedOffsetsFailed(at: start + .milliseconds(500))
        #expect(failed408 == .seconds(1))
        #expect(!ledger.storedOffsetsDue(at: start + .milliseconds(1_000)))
        // The store holds partition 0 at 70 and nothing for partition 1: it starts again where the reset put it.
        let seeks = ledger.resolveStoredOffsets([0: 70])
        #expect(Set(seeks) == [.init(partition: 0, offset: 70), .init(partition: 1, offset: 0)])
        #expect(!ledger.storedOffsetsDue(at: start + .seconds(60)))
        let step5 = Self.consume(&ledger, 0, from: 70, upTo: 72)
        #expect(step5)
        #expect(ledger.progress(topic: "plays") { _ in nil }.partitions.map(\.startOffset) == [70])
    }

    @Test("a store that stays down past the backoff's maximum gives up the wait for stored offsets")
    func awaitingGivesUp() {
        var ledger = PartitionLedger(retryBackoff: Backoff(initial: .seconds(1), maximum: .seconds(4)))
        _ = ledger.assign([0], stored: nil, now: start)
        let failed417 = ledger.storedOffsetsFailed(at: start + .seconds(1))
        #expect(failed417 == .seconds(2))
        let failed485 = ledger.storedOffsetsFailed(at: start + .seconds(3))
        #expect(failed485 == nil)
    }

    @Test("revoked partitions leave the ledger, and a rewind never seeks them or partitions still waiting")
    func revokedAndWaitingAreNotSought() {
        var ledger = PartitionLedger(retryBackoff: Self.backoff)
        _ = ledger.assign([0, 1], stored: [0: 5, 1: 5], now: start)
        _ = Self.consume(&ledger, 0, from: 5, upTo: 8)
        _ = Self.consume(&ledger, 1, from: 5, upTo: 8)
        ledger.revoke([1])
        #expect(ledger.assigned == [0])
        _ = ledger.assign([2], stored: nil, now: start)
        _ = Self.consume(&ledger, 2, from: 0, upTo: 4)
        let rewound = ledger.rewind(to: [0: 5, 1: 5])
        #expect(rewound == [.init(partition: 0, offset: 5)])
        ledger.revoke([2])
        #expect(!ledger.storedOffsetsDue(at: start + .seconds(60)), "no retry for partitions no longer held")
    }
}

@Suite("The compaction cadence of realtime flushes", .onTestThreads)
struct CompactionCadenceTests {
    static func due(_ cadence: inout CompactionCadence, at now: ContinuousClock.Instant) -> Bool {
        cadence.isDue(at: now)
    }

    @Test("the first flush compacts, the next ones only once the interval has passed")
    func compactsEveryInterval() {
        var cadence = CompactionCadence()
        let start = ContinuousClock.now
        let step6 = Self.due(&cadence, at: start)
        #expect(step6)
        cadence.finished(.success(10))
        let step7 = Self.due(&cadence, at: start + .seconds(1))
        #expect(!step7)
        let step8 = Self.due(&cadence, at: start + CompactionCadence.interval)
        #expect(step8)
    }

    @Test("a compaction that used its whole row budget is followed at once by another; a failed one waits")
    func backlogCompactsAtOnce() {
        struct DiskFull: Error {}
        var cadence = CompactionCadence()
        let start = ContinuousClock.now
        let step9 = Self.due(&cadence, at: start)
        #expect(step9)
        cadence.finished(.success(CompactionCadence.rowsPerFlush))
        let step10 = Self.due(&cadence, at: start + .milliseconds(250))
        #expect(step10)
        cadence.finished(.failure(DiskFull()))
        let step11 = Self.due(&cadence, at: start + .milliseconds(500))
        #expect(!step11)
    }
}
