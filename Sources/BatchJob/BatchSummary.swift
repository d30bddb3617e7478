import CounterpointCore
import CounterStore

/// What a batch run did: printed at the end as text or one JSON object (`--json`), and
/// recorded with the run in the batch store.
public struct BatchSummary: Sendable, EventTallies {
    /// The hour ranges replaced (each atomically).
    public var ranges: [HourRange] = []
    public var files = 0
    public var bytesRead: Int64 = 0
    /// Non-blank lines read.
    public var eventsRead = 0
    /// Events that passed validation (in or out of range, duplicates included).
    public var valid = 0
    /// Valid events whose `event_id` was already counted in the same hour.
    public var duplicates = 0
    /// Valid events of hours outside the rebuilt ranges: read, not counted.
    public var outsideRange = 0
    public var rejections = RejectionLog()
    /// Distinct tracks with plays in the rebuilt ranges.
    public var tracks = 0
    /// Distinct creators the counted events named (SPEC §11).
    public var creators = 0
    /// Hours rebuilt (covered), including hours without plays: the hours processed.
    public var hours: Int64 = 0
    /// Closed hours a default run left alone: covered, and their files unchanged since.
    public var hoursSkipped: Int64 = 0
    /// Covered hours a default run left alone because files they were covered from are gone
    /// (their counts are kept; `--from`/`--to` rebuilds them from what remains), as ranges.
    public var hoursWithFilesGone: [HourRange] = []
    /// (track, hour) rows written.
    public var rows = 0
    public var seconds = 0.0

    public init() {}

    /// Events counted as plays.
    public var counted: Int { valid - duplicates - outsideRange }

    public var eventsPerSecond: Double { seconds > 0 ? Double(eventsRead) / seconds : 0 }

    /// The run record kept in the batch store.
    func batchRun(startedAt: Int64, finishedAt: Int64) -> BatchRun {
        // Its range is the store's to set: the span it replaced.
        BatchRun(startedAt: startedAt, finishedAt: finishedAt, eventsRead: eventsRead, valid: valid,
                 duplicates: duplicates, rejected: rejections.total,
                 rejectedByReason: Dictionary(uniqueKeysWithValues: rejections.counts.map { ($0.key.rawValue, $0.value) }),
                 tracks: tracks, rows: rows)
    }
}

/// The counts one worker gathered over its share of the input.
struct GroupTally: Sendable, EventTallies {
    var eventsRead = 0
    var valid = 0
    var duplicates = 0
    var outsideRange = 0
    var rejections = RejectionLog()
    /// Where each of `rejections.samples` was read, in the same order.
    var sampleOrigins: [LineOrigin] = []

    /// The tallies of parallel workers as one: counts added, samples in the order of their
    /// lines in the run's input, so a rerun shows the same sample however the work was shared.
    static func combined(_ tallies: [GroupTally]) -> GroupTally {
        var result = GroupTally()
        for tally in tallies { result.addCounts(tally) }
        result.sampleOrigins = result.rejections.merge(tallies.map { ($0.rejections, $0.sampleOrigins) })
        return result
    }
}

/// A line's place in a run's input, in reading order: the files of unknown hour first (in
/// plan order), then each hour unit's files.
struct LineOrigin: Comparable, Sendable {
    /// -1 for the files of unknown hour, else the hour unit's index.
    var unit: Int
    var file: Int
    var line: Int

    static func < (a: LineOrigin, b: LineOrigin) -> Bool {
        (a.unit, a.file, a.line) < (b.unit, b.file, b.line)
    }
}

/// The counts of events read that a worker gathers and a run adds up.
protocol EventTallies {
    var eventsRead: Int { get set }
    var valid: Int { get set }
    var duplicates: Int { get set }
    var outsideRange: Int { get set }
    var rejections: RejectionLog { get set }
}

extension EventTallies {
    /// Adds a worker's counts and rejections to these.
    mutating func add(_ other: GroupTally) {
        addCounts(other)
        rejections.merge(other.rejections)
    }

    /// Adds a worker's counts of events to these, leaving the rejections alone.
    mutating func addCounts(_ other: GroupTally) {
        eventsRead += other.eventsRead
        valid += other.valid
        duplicates += other.duplicates
        outsideRange += other.outsideRange
    }
}
