import CounterpointCore

/// The realtime layer's rows over some gaps, summed per track and ranked by one signal's count,
/// and the snapshot version they were read at.
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
/// The window is kept as two parts: the settled hours summed per track as one run, with the
/// stamps they were summed at, and a few unsettled hours (the newest, and those that changed
/// lately) each summed per track with its stamp (`LayerReads.realtimeHourStamps`). A new window
/// reads again the unsettled hours whose stamps moved and merges their runs with the settled
/// one. Only when a settled hour changes or goes (a late event, a compaction) are the settled
/// hours read again — what every window cost before. Memory follows the tracks and the few
/// unsettled hours' rows, not the window's rows. Exact: the same stamp means the same rows, and a
/// store that cannot vouch for its stamps (nil) has the whole window read again, as with no cache.
struct RealtimeWindowCache {
    /// The most hours kept unsettled: flushes write to the newest one or two.
    static let maxUnsettledHours = 4

    /// The signal this window sums (a reader keeps one window per signal it ranks by).
    let signal: Signal
    /// Whose rows it sums.
    let kind: SubjectKind

    init(_ kind: SubjectKind = .track, signal: Signal = .plays) {
        self.kind = kind
        self.signal = signal
    }

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
            for run in runs.values { totals.add(run: run.entries) }
        } else {
            forget()
            for gap in gaps { try layers.realtimeRows(kind, in: gap, signal: signal) { totals.add($0, $1) } }
        }
        totals.finish()
        let ranked = PartialRanking(totals.entries.filter { $0.plays > 0 })
        let window = RealtimeWindow(version: state.realtimeVersion, gaps: gaps, totals: totals, ranked: ranked)
        last = state.realtimeVersion == nil ? nil : window
        return window
    }

    /// Lets everything go (the store stopped vouching for its stamps: a writer of an older version).
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

    /// Brings the settled sums and the unsettled runs to `stamps`, the window's hours now.
    private mutating func update(_ stamps: [Int64: Int64], _ layers: any LayerReads) throws {
        runs = runs.filter { stamps[$0.key] != nil }
        let settledHold = settled.stamps.allSatisfy { stamps[$0.key] == $0.value }
        // (Many unsettled hours, as on a first read, are summed as the settled ones are below,
        // without holding every hour's run at once.)
        if settledHold && stamps.count - settled.stamps.count <= 2 * Self.maxUnsettledHours {
            for (hour, stamp) in stamps where settled.stamps[hour] == nil && runs[hour]?.stamp != stamp {
                runs[hour] = HourRun(stamp: stamp, entries: try read(hour, layers))
            }
            guard runs.count > Self.maxUnsettledHours else { return }
            // New hours arrived: the oldest unsettled ones join the settled sums.
            var sums = WindowTotals()
            sums.add(run: settled.entries)
            for hour in runs.keys.sorted().dropLast(Self.maxUnsettledHours) {
                sums.add(run: runs[hour]!.entries)
                settled.stamps[hour] = runs.removeValue(forKey: hour)!.stamp
            }
            sums.finish()
            settled.entries = sums.entries
            return
        }
        // A settled hour changed or went (or this is a first read): the settled hours are read
        // again, and the hours that changed now join the unsettled ones (they may well change
        // again), newest first.
        let changed = stamps.filter { (settled.stamps[$0.key] ?? runs[$0.key]?.stamp) != $0.value }.keys
        let unsettled = Set(Set(changed).union(runs.keys).sorted().suffix(Self.maxUnsettledHours))
        var sums = WindowTotals()
        var settledStamps: [Int64: Int64] = [:]
        for (hour, stamp) in stamps {
            if unsettled.contains(hour) {
                if runs[hour]?.stamp != stamp { runs[hour] = HourRun(stamp: stamp, entries: try read(hour, layers)) }
            } else {
                try layers.realtimeRows(kind, in: Self.range(hour), signal: signal) { sums.add($0, $1) }
                settledStamps[hour] = stamp
                runs[hour] = nil
            }
        }
        sums.finish()
        settled = (settledStamps, sums.entries)
    }

    private static func range(_ hour: Int64) -> HourRange { HourRange(Hour(index: hour), Hour(index: hour).advanced(by: 1)) }

    /// One hour's rows summed per track.
    private func read(_ hour: Int64, _ layers: any LayerReads) throws -> [RankedEntry] {
        var totals = WindowTotals()
        try layers.realtimeRows(kind, in: Self.range(hour), signal: signal) { totals.add($0, $1) }
        totals.finish()
        return totals.entries
    }
}
