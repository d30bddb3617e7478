import CounterpointCore
import CounterStore
import Dispatch
import Foundation
import Synchronization

/// Recent top-N rankings, shared by every reader thread.
///
/// Top-N is the one query that reads every track of its range: over a day of a busy store it
/// costs hundreds of milliseconds of CPU. The load test showed dashboards polling top-N
/// saturating both cores, and cheap requests queued behind a ranking on the same server thread
/// waiting as long. Dashboards ask for the same few ranges over and over, so one ranking per
/// range is kept for `maxAge`, computed at the longest length so that any `limit` is a prefix.
/// Only the first request for a range ranks on its own thread; when a ranking expires, the
/// next request hands the new ranking to a background thread and answers from the previous
/// one, so no server thread waits for a ranking again.
///
/// A cached answer carries the freshness it was computed with, so a dashboard still sees how
/// current it is (`realtime_flushed_at` at most `maxAge` plus one ranking older).
final class TopAnswerCache: Sendable {
    typealias Answer = (tracks: [TrackPlays], freshness: Freshness)

    private struct Ranking {
        var tracks: [TrackPlays]
        var freshness: Freshness
        var computedAt: ContinuousClock.Instant
    }

    private struct Slot {
        var ranking: Ranking?
        var refreshing = false
    }

    private struct State {
        var slots: [HourRange: Slot] = [:]
        var queue: [HourRange] = []
        var stopped = false
    }

    let maxAge: Duration
    /// Rankings are this long, the longest `limit` a request may ask for.
    let rankingLength: Int
    /// Ranges kept at most; the oldest rankings go first. Dashboards use a handful.
    let capacity: Int
    private let location: StoreLocation
    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let refresherEnded = DispatchSemaphore(value: 0)

    /// With a zero `maxAge` nothing is kept and no thread starts.
    init(maxAge: Duration, rankingLength: Int, location: StoreLocation, capacity: Int = 64) {
        self.maxAge = maxAge
        self.rankingLength = rankingLength
        self.location = location
        self.capacity = capacity
        if maxAge > .zero {
            let thread = Thread { [self] in
                Thread.current.name = "top-rankings"
                refreshUntilStopped()
            }
            thread.start()
        }
    }

    /// The top `limit` tracks over `range`. `rank(length)` ranks on the calling thread, with
    /// its store connections; it runs only when nothing is cached for the range yet.
    func top(in range: HourRange, limit: Int, rank: (Int) throws -> Answer) throws -> (tracks: ArraySlice<TrackPlays>, freshness: Freshness) {
        guard maxAge > .zero else {
            let answer = try rank(limit)
            return (answer.tracks[...], answer.freshness)
        }
        let now = ContinuousClock.now
        let (cached, refresh): (Ranking?, Bool) = state.withLock { state in
            guard let slot = state.slots[range], let ranking = slot.ranking else { return (nil, false) }
            guard now - ranking.computedAt >= maxAge, !slot.refreshing, !state.stopped else { return (ranking, false) }
            state.slots[range]?.refreshing = true
            state.queue.append(range)
            return (ranking, true)
        }
        if refresh { wakeUp.signal() }
        if let cached {
            return (cached.tracks.prefix(limit), cached.freshness)
        }
        let answer = try rank(rankingLength)
        store(answer, for: range)
        return (answer.tracks.prefix(limit), answer.freshness)
    }

    /// Ends the background thread (waiting for a ranking in progress). Idempotent.
    func stop() {
        guard maxAge > .zero else { return }
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        wakeUp.signal()
        refresherEnded.wait()
    }

    private func store(_ answer: Answer, for range: HourRange) {
        let ranking = Ranking(tracks: answer.tracks, freshness: answer.freshness, computedAt: ContinuousClock.now)
        state.withLock { state in
            state.slots[range] = Slot(ranking: ranking, refreshing: false)
            if state.slots.count > capacity,
               let oldest = state.slots.min(by: { Self.computedAt($0.value) < Self.computedAt($1.value) })?.key {
                state.slots[oldest] = nil
            }
        }
    }

    private static func computedAt(_ slot: Slot) -> ContinuousClock.Instant {
        slot.ranking?.computedAt ?? ContinuousClock.now
    }

    /// The background thread: ranks queued ranges with its own store connections, opened on
    /// first use and again after a failure (the previous ranking is served meanwhile).
    private func refreshUntilStopped() {
        var reader: CounterReader?
        while true {
            wakeUp.wait()
            let next: HourRange? = state.withLock { state in
                state.stopped || state.queue.isEmpty ? nil : state.queue.removeFirst()
            }
            guard let range = next else {
                if state.withLock({ $0.stopped }) { break }
                continue
            }
            do {
                if reader == nil { reader = try CounterReader(location: location) }
                let tracks = try reader!.top(in: range, limit: rankingLength)
                store((tracks, reader!.lastFreshness), for: range)
            } catch {
                reader = nil
                state.withLock { $0.slots[range]?.refreshing = false }
            }
        }
        refresherEnded.signal()
    }
}
