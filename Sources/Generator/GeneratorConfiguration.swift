#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CounterpointCore
import Runtime

/// What `Generator.generate` writes. The defaults make a two-day, 1 M-event data set.
public struct GeneratorConfiguration: Sendable {
    /// Valid, unique events in total, plays and the other signals' (duplicates and malformed
    /// lines come on top).
    public var events: Int = 1_000_000
    /// Track ids are `1…tracks`; track 1 is the most popular.
    public var tracks: Int = 10_000
    /// Listener ids are drawn uniformly from `1…listeners`.
    public var listeners: Int = 100_000
    /// The first hour; `nil` means the current hour minus `hours`, so the data ends now.
    public var start: Hour? = nil
    public var hours: Int = 48
    /// Zipf exponent `s`: track `k` is played in proportion to `1 / k^s`.
    public var popularitySkew: Double = 1.1
    /// Creator ids are `1…creators` (SPEC §11): every track has one, drawn for it by `catalogueSkew`;
    /// `nil` means one creator per ten tracks, 0 writes no `creator_id` at all.
    public var creators: Int? = nil
    /// Zipf exponent of catalogue sizes: creator `c` owns tracks in proportion to `1 / c^s`, so
    /// most creators own a few tracks and a few own thousands.
    public var catalogueSkew: Double = 1.0
    /// Fraction of events that name their track's creator (the rest carry no `creator_id`). 0…1.
    public var creatorShare: Double = 0.97
    /// Fraction of events that are not plays when every signal is on (SPEC §11), 0…1: each
    /// other event type takes its fixed part of it (`SignalMix`); a signal left out of `signals`
    /// leaves its part to plays. 0 writes plays only.
    public var signalShare: Double = Self.defaultSignalShare
    /// The signals generated beside plays (plays are always generated, whether `.plays` is in
    /// the set or not). Turning one off removes both its types, retractions included.
    public var signals: Set<Signal> = Set(Signal.allCases)
    /// Fraction of events written twice (same `event_id`, same bytes) in the same hour file, half
    /// of them right after the original, half at a random later position. 0…1.
    public var duplicateRate: Double = 0.0
    /// Extra lines that must be rejected, as a fraction of `events` (see `MalformedKind`). ≥ 0.
    public var malformedRate: Double = 0.0
    public var seed: UInt64 = 1
    public var gzip: Bool = false
    /// zlib level for `gzip` output.
    public var gzipLevel: Int = 1
    /// Write `<HH>.closed` markers, so that `batch` treats the generated hours as complete.
    public var closeHours: Bool = true
    /// Return the per-(track, hour) count of valid unique plays in `GeneratorSummary.truth`, and
    /// the other signals' net counts in `otherSignalsTruth`.
    public var recordTruth: Bool = false
    /// Hours to leave as they are: nothing is written for them (no file, no marker, nothing in
    /// the summary), but their events are still drawn, so every other hour holds the same bytes
    /// as without them.
    public var keptHours: Set<Hour> = []
    /// "Now": what a `nil` start ends at, and when live synthetic events (`replay`, the demo's
    /// traffic) occur.
    public var clock = WallClock.system

    public init() {}

    /// The default `signalShare` of the library: plays only, byte for byte what the generator
    /// wrote before it had the mix (same seed) — what the suites that count plays generate. The
    /// product's surfaces ask for the realistic mix (`SignalMix.realisticShare`, SPEC §11):
    /// `counterpoint generate` by default, and `run --demo`'s history and live traffic.
    public static let defaultSignalShare: Double = 0

    /// `creators`, resolving the `nil` default against `tracks`.
    public var resolvedCreators: Int { creators ?? max(1, tracks / 10) }

    /// The first hour, resolving the `nil` default against `clock`.
    public func resolvedStart() -> Hour {
        start ?? Hour(epochMilliseconds: clock.epochMilliseconds()).advanced(by: -Int64(hours))
    }

    /// Throws `GeneratorError.invalidConfiguration` naming the first bad value.
    public func validate() throws {
        func check(_ condition: Bool, _ message: String) throws {
            if !condition { throw GeneratorError.invalidConfiguration(message) }
        }
        try check(events >= 0, "events must be at least 0")
        try check(tracks >= 1 && Int64(tracks) <= EventLimits.maxTrackID, "tracks must be between 1 and \(EventLimits.maxTrackID)")
        try check(listeners >= 1, "listeners must be at least 1")
        try check(hours >= 1, "hours must be at least 1")
        try check(popularitySkew >= 0 && popularitySkew.isFinite, "popularity skew must be a finite number ≥ 0")
        try check(resolvedCreators >= 0 && Int64(resolvedCreators) <= EventLimits.maxCreatorID,
                  "creators must be between 0 and \(EventLimits.maxCreatorID)")
        try check(catalogueSkew >= 0 && catalogueSkew.isFinite, "catalogue skew must be a finite number ≥ 0")
        try check(creatorShare >= 0 && creatorShare <= 1, "creator share must be between 0 and 1")
        try check(signalShare >= 0 && signalShare <= 1, "signal share must be between 0 and 1")
        try check(duplicateRate >= 0 && duplicateRate <= 1, "duplicate rate must be between 0 and 1")
        try check(malformedRate >= 0 && malformedRate.isFinite, "malformed rate must be a finite number ≥ 0")
        try check((0...9).contains(gzipLevel), "gzip level must be between 0 and 9")
        let first = resolvedStart()
        try check(first.index >= EventLimits.earliestHourIndex
                  && first.index + Int64(hours) <= EventLimits.latestHourIndex,
                  "hours must lie between 2000-01-01 and 2100-01-01")
    }
}

public enum GeneratorError: Error, CustomStringConvertible, Equatable {
    case invalidConfiguration(String)
    /// The logs would need about `needed` bytes where only `available` are free: nothing was written.
    case wouldNotFit(root: String, needed: Int64, available: Int64)

    public var description: String {
        switch self {
        case let .invalidConfiguration(message): "invalid generator configuration: \(message)"
        case let .wouldNotFit(root, needed, available):
            "the logs would take about \(needed / 1_000_000) MB but \(root) has \(available / 1_000_000) MB free; nothing was written (generate fewer events, use --gzip, or free space)"
        }
    }
}

extension GeneratorConfiguration {
    /// Bytes of NDJSON an event line takes on average (docs/event-format.md's fields, a
    /// `creator_id` on most; the generator's tests measure about 215, and the same with the
    /// realistic signal mix, whose events mostly lack `position_ms`), rounded up.
    static let averageLineBytes = 232

    /// About how many bytes `Generator.generate` will write: every line (duplicates and
    /// malformed lines too) of the hours it writes, a fifth of that gzipped (level 1 packs
    /// these lines about 5×).
    public var estimatedBytes: Int64 {
        let lines = Double(events) * (1 + duplicateRate + malformedRate)
        let writtenShare = hours > 0 ? Double(max(0, hours - keptHours.count)) / Double(hours) : 1
        let plain = lines * writtenShare * Double(Self.averageLineBytes)
        return Int64((gzip ? plain / 5 : plain).rounded(.up))
    }
}

/// How many events each hour gets: a sinusoid over the UTC day, peaking at 20:00 UTC (European
/// evening) at three times the 08:00 trough, with the total split exactly (largest remainder).
public enum DailyRhythm {
    /// The relative weight of an hour of the day, 0.5…1.5.
    public static func weight(hourOfDay: Int) -> Double {
        1 + 0.5 * sin(2 * Double.pi * Double(hourOfDay - 14) / 24)
    }

    /// `total` events split over `hours` hours from `start`; the parts sum to `total` exactly.
    public static func eventsPerHour(total: Int, start: Hour, hours: Int) -> [Int] {
        let weights = (0..<hours).map { offset in
            let hour = start.advanced(by: Int64(offset))
            return weight(hourOfDay: Int(hour.index - hour.startOfDay.index))
        }
        let sum = weights.reduce(0, +)
        let exact = weights.map { Double(total) * $0 / sum }
        var counts = exact.map { Int($0.rounded(.down)) }
        let missing = total - counts.reduce(0, +)
        // Ties broken by position, so the split is deterministic.
        let byRemainder = exact.indices.sorted { lhs, rhs in
            let left = exact[lhs] - Double(counts[lhs]), right = exact[rhs] - Double(counts[rhs])
            return left != right ? left > right : lhs < rhs
        }
        for index in byRemainder.prefix(missing) { counts[index] += 1 }
        return counts
    }
}
