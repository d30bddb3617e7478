/// The archiver's notion of how far the stream has got: the time before which no more
/// events are expected (but for lateness), from the `occurred_at` of the events consumed.
///
/// Each assigned partition contributes the newest event time it has delivered. A partition
/// with a backlog holds the stream time back to its own newest event, so a consumer that
/// catches up on one partition after a restart does not close hours that another partition
/// still has events for. A partition that has caught up with its broker's high watermark
/// holds nothing back: its next events can only be newer than the ones still in flight
/// elsewhere, and an idle partition would otherwise keep every hour open. The stream time is
/// never ahead of the newest event seen on any assigned partition, nor of the wall clock: an
/// event dated in the future (a producer's clock set wrong) would otherwise close the hours
/// before it, the current one included, while their events are still arriving.
///
/// Only the consumer's thread uses it.
struct StreamClock {
    /// Newest `occurred_at` (epoch ms) delivered by each assigned partition, nil before its first event.
    private var newest: [Int32: Int64?] = [:]

    var assignedPartitions: [Int32] { newest.keys.sorted() }

    mutating func assign(_ partitions: [Int32]) {
        for partition in partitions where newest[partition] == nil { newest[partition] = .some(nil) }
    }

    mutating func revoke(_ partitions: [Int32]) {
        for partition in partitions { newest.removeValue(forKey: partition) }
    }

    @inline(__always)
    mutating func observe(partition: Int32, occurredAtMilliseconds: Int64) {
        if let known = newest[partition], let time = known, time >= occurredAtMilliseconds { return }
        newest[partition] = occurredAtMilliseconds
    }

    /// The newest `occurred_at` delivered by any assigned partition (epoch ms).
    var newestEvent: Int64? { newest.values.compactMap({ $0 }).max() }

    /// Epoch milliseconds, or nil while no event has arrived or a partition with a backlog
    /// has not delivered any yet. `caughtUp` says whether a partition has nothing left to read;
    /// `now` is the wall clock (epoch ms), which the stream time never passes.
    func streamTime(caughtUp: (Int32) -> Bool, now: Int64) -> Int64? {
        guard let head = newestEvent else { return nil }
        var time = min(head, now)
        for (partition, latest) in newest where !caughtUp(partition) {
            guard let latest else { return nil }
            time = min(time, latest)
        }
        return time
    }
}
