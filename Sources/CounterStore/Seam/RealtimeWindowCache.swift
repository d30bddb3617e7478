import CounterpointCore

/// The realtime layer's rows over some gaps, summed per track and ranked by plays, and the
/// snapshot version they were read at.
struct RealtimeWindow {
    var version: String?
    var gaps: [HourRange]
    var totals: WindowTotals
    /// The tracks with plays, ranked as deep as rankings read.
    var ranked: PartialRanking
}

/// A reader's realtime window for rankings, kept from one snapshot to the next and brought up
/// to date hour by hour: a flush changes the hours it wrote to (one or two while events arrive in
/// time order), and every reader thread used to read and sum the whole uncovered window again
/// after each flush — its largest cost under load (docs/performance.md).
///
/// Each hour's rows are kept summed per track with the hour's stamp (`LayerReads.realtimeHourStamps`);
/// an hour whose stamp moved is read again, an hour gone is dropped. The hours no recent read saw
/// change are kept summed as one run (`settled`), so a new window merges that run with the few
/// unsettled hours' runs instead of every hour's. Exact: the same stamp means the same rows, and a
/// store that cannot vouch for its stamps (nil) has the whole window read again, as with no cache.
struct RealtimeWindowCache {
    /// More unsettled hours than this settle again (the hours flushes touch are the unsettled ones).
    static let maxUnsettledHours = 4

    /// One hour's rows summed per track, by ascending track id, and the stamp they were read at.
    private struct HourRun {
        var stamp: Int64
        var entries: [RankedEntry]
    }

    private var runs: [Int64: HourRun] = [:]
    /// The sums of the settled hours, by ascending track id, and the stamps they were summed at.
    private var settled: (stamps: [Int64: Int64], entries: [RankedEntry]) = ([:], [])
    private var last: RealtimeWindow?

    /// The window of `gaps` as of `state`'s snapshot, read through `layers`.
    mutating func window(_ gaps: [HourRange], state: SnapshotState, layers: any LayerReads) throws -> RealtimeWindow {
        if let version = state.realtimeVersion, let last, last.version == version, last.gaps == gaps {
            return last
        }
        var totals = WindowTotals()
        if state.realtimeVersion != nil, let stamps = try Self.stamps(of: gaps, layers) {
            try update(stamps, layers)
            totals.add(run: settled.entries)
            for (hour, run) in runs where settled.stamps[hour] == nil { totals.add(run: run.entries) }
        } else {
            forget()
            for gap in gaps { try layers.realtimeRows(in: gap) { totals.add($0, $1) } }
        }
        totals.finish()
        let ranked = PartialRanking(totals.entries.filter { $0.plays > 0 })
        let window = RealtimeWindow(version: state.realtimeVersion, gaps: gaps, totals: totals, ranked: ranked)
        last = state.realtimeVersion == nil ? nil : window
        return window
    }

    /// Lets everything go (the reader's snapshots failed, or the store stopped vouching for its stamps).
    mutating func forget() {
        runs = [:]
        settled = ([:], [])
        last = nil
    }

    private static func stamps(of gaps: [HourRange], _ layers: any LayerReads) throws -> [Int64: Int64]? {
        var stamps: [Int64: Int64] = [:]
        for gap in gaps {
            guard let found = try layers.realtimeHourStamps(in: gap) else { return nil }
            for (hour, stamp) in found { stamps[hour] = stamp }
        }
        return stamps
    }

    /// Reads the hours whose stamps moved, drops those gone, and settles again when the settled
    /// sums no longer hold or too many hours are unsettled.
    private mutating func update(_ stamps: [Int64: Int64], _ layers: any LayerReads) throws {
        var changed: Set<Int64> = []
        for (hour, stamp) in stamps where runs[hour]?.stamp != stamp {
            var totals = WindowTotals()
            try layers.realtimeRows(in: HourRange(Hour(index: hour), Hour(index: hour + 1))) { totals.add($0, $1) }
            totals.finish()
            runs[hour] = HourRun(stamp: stamp, entries: totals.entries)
            changed.insert(hour)
        }
        runs = runs.filter { stamps[$0.key] != nil }

        let settledHold = settled.stamps.allSatisfy { stamps[$0.key] == $0.value }
        let unsettled = stamps.count - (settledHold ? settled.stamps.count : 0)
        guard !settledHold || unsettled > Self.maxUnsettledHours else { return }
        // Every hour but those that changed now, the ones flushes write to; when all changed (a
        // first read), every hour but the latest.
        let hot = changed.count == stamps.count ? Set(stamps.keys.max().map { [$0] } ?? []) : changed
        var sums = WindowTotals()
        var settledStamps: [Int64: Int64] = [:]
        for (hour, run) in runs where !hot.contains(hour) {
            sums.add(run: run.entries)
            settledStamps[hour] = run.stamp
        }
        sums.finish()
        settled = (settledStamps, sums.entries)
    }
}
