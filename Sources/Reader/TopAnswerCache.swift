import CounterpointCore
import CounterStore
import Synchronization

/// Recent top-N rankings, shared by every reader thread.
///
/// Top-N is the one query that reads every track of its range: over a day of a busy store it
/// costs hundreds of milliseconds of CPU, and the load test showed a dashboard mix with 10 %
/// top-N requests saturating both cores and stalling the cheap requests queued behind it on the
/// same threads. Dashboards ask for the same few ranges over and over, so a ranking is kept for
/// `maxAge` per range, computed at the largest limit so that any `limit` is a prefix of it.
/// While one thread recomputes an expired ranking the others keep answering the previous one.
///
/// A cached answer carries the freshness it was computed with, so a dashboard still sees how
/// current it is (`realtime_flushed_at` at most `maxAge` plus one computation older).
final class TopAnswerCache: Sendable {
    struct Ranking: Sendable {
        var tracks: [TrackPlays]
        var freshness: Freshness
        var computedAt: ContinuousClock.Instant
    }

    private struct Slot {
        var ranking: Ranking?
        var computing = false
    }

    let maxAge: Duration
    /// Ranges kept at most; the oldest rankings go first. Dashboards use a handful.
    let capacity: Int
    private let slots = Mutex<[HourRange: Slot]>([:])

    init(maxAge: Duration, capacity: Int = 64) {
        self.maxAge = maxAge
        self.capacity = capacity
    }

    /// The top `limit` tracks over `range`: a ranking younger than `maxAge`, else the previous
    /// one while another thread recomputes it, else `compute(rankingLength)` run on this thread.
    func top(in range: HourRange, limit: Int, rankingLength: Int,
             compute: (Int) throws -> (tracks: [TrackPlays], freshness: Freshness)) throws -> (tracks: ArraySlice<TrackPlays>, freshness: Freshness) {
        guard maxAge > .zero else {
            let answer = try compute(limit)
            return (answer.tracks[...], answer.freshness)
        }
        let now = ContinuousClock.now
        let cached: Ranking? = slots.withLock { slots in
            let slot = slots[range, default: Slot()]
            if let ranking = slot.ranking, now - ranking.computedAt < maxAge || slot.computing {
                return ranking
            }
            slots[range, default: Slot()].computing = true
            return nil
        }
        if let cached {
            return (cached.tracks.prefix(limit), cached.freshness)
        }
        let ranking: Ranking
        do {
            let answer = try compute(rankingLength)
            ranking = Ranking(tracks: answer.tracks, freshness: answer.freshness, computedAt: ContinuousClock.now)
        } catch {
            slots.withLock { $0[range]?.computing = false }
            throw error
        }
        slots.withLock { slots in
            slots[range] = Slot(ranking: ranking, computing: false)
            if slots.count > capacity, let oldest = slots.min(by: { Self.age($0.value) < Self.age($1.value) })?.key {
                slots[oldest] = nil
            }
        }
        return (ranking.tracks.prefix(limit), ranking.freshness)
    }

    private static func age(_ slot: Slot) -> ContinuousClock.Instant {
        slot.ranking?.computedAt ?? ContinuousClock.now
    }
}
