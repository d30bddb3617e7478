import CounterpointCore
import CounterStore
@testable import Reader
import Patience
import Testing

/// The rule by which a gathered point lookup's request takes an answer read for it (PostgreSQL):
/// only one whose read began at or after the moment given, as many times as it was read for.
@Suite("Gathered point lookups", .onTestThreads)
struct PendingLookupsTests {
    let key = PendingLookups.Key(track: 7, range: HourRange(Hour(index: 10), Hour(index: 20)))
    let answer = (plays: TrackPlays(id: 7, batchPlays: 3, realtimePlays: 4),
                  freshness: Freshness(batchCoveredUntil: nil, realtimeFlushedAt: nil, realtimeLagEvents: nil))

    @Test("a request takes an answer read since it arrived, once per request it was read for, and never an older one")
    func answersAreTakenOnlyWhenFreshEnough() {
        var lookups = PendingLookups()
        let arrived = ContinuousClock.now
        let readAt = arrived + .milliseconds(1)
        // Read for two waiting requests of the same key.
        lookups.keep([key: answer], readAt: readAt, for: [key, key], keptFor: .seconds(60))
        // A request that arrived after the read began (a client that gave up left this answer
        // behind, say) does not take it, however young it is: it reads for itself.
        #expect(lookups.take(key, readSince: readAt + .nanoseconds(1)) == nil)
        #expect(lookups.take(key, readSince: arrived)?.plays == answer.plays)
        #expect(lookups.take(key, readSince: readAt)?.plays.plays == 7)
        // Taken as often as it was read for, then gone.
        #expect(lookups.take(key, readSince: arrived) == nil)
    }

    @Test("answers older than they are kept for go at the next read; a newer read of the same key replaces them for every taker")
    func keptAnswersAge() {
        var lookups = PendingLookups()
        let start = ContinuousClock.now
        let old = start - .milliseconds(50)
        lookups.keep([key: answer], readAt: old, for: [key], keptFor: .milliseconds(20))
        let other = PendingLookups.Key(track: 8, range: key.range)
        var newer = answer
        newer.plays = TrackPlays(id: 8, batchPlays: 0, realtimePlays: 1)
        // The next read drops what has been kept too long.
        lookups.keep([other: newer], readAt: start, for: [other], keptFor: .milliseconds(20))
        #expect(lookups.take(key, readSince: old) == nil)
        #expect(lookups.take(other, readSince: start)?.plays.plays == 1)

        // A request still to take an earlier answer takes the newer one.
        lookups.keep([key: answer], readAt: start, for: [key], keptFor: .seconds(60))
        var fresher = answer
        fresher.plays = TrackPlays(id: 7, batchPlays: 3, realtimePlays: 5)
        lookups.keep([key: fresher], readAt: start + .milliseconds(1), for: [key], keptFor: .seconds(60))
        #expect(lookups.take(key, readSince: start)?.plays.plays == 8)
        #expect(lookups.take(key, readSince: start)?.plays.plays == 8)
        #expect(lookups.take(key, readSince: start) == nil)
    }
}
