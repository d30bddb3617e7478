import CounterpointCore

/// Each track's plays over a realtime window, summed from rows that come in runs of ascending
/// track ids (`LayerReads.realtimeRows`): each run is merged into the sums so far in one linear
/// pass, sequential memory where a hash table took a cache miss a row (the window can be
/// millions of rows, and every reader thread sums it again after each flush).
struct WindowTotals {
    /// By ascending track id, one entry per track, once `finish` has run.
    private(set) var entries: [RankedEntry] = []
    private var run: [RankedEntry] = []
    private var merged: [RankedEntry] = []

    /// Adds a row; a track id not above the last one starts a new run.
    mutating func add(_ track: Int64, _ plays: Int64) {
        if let last = run.last, track <= last.id { mergeRun() }
        run.append(RankedEntry(id: track, plays: plays))
    }

    /// Adds a whole run: entries of strictly ascending track ids (another window's `entries`).
    mutating func add(run entries: [RankedEntry]) {
        mergeRun()
        merge(entries)
    }

    /// Merges the last run in; `entries` then holds the sums (and the spare buffers are let go:
    /// a reader keeps its last window until the next flush).
    mutating func finish() {
        mergeRun()
        run = []
        merged = []
    }

    /// The plays of `track` over the window (0 when it has none).
    func plays(of track: Int64) -> Int64 {
        var (low, high) = (0, entries.count)
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < track { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].id == track ? entries[low].plays : 0
    }

    private mutating func mergeRun() {
        guard !run.isEmpty else { return }
        if entries.isEmpty {
            swap(&entries, &run)
            return
        }
        merge(run)
        run.removeAll(keepingCapacity: true)
    }

    /// Merges `other` (ascending, distinct track ids) into `entries` in one linear pass.
    private mutating func merge(_ other: [RankedEntry]) {
        guard !other.isEmpty else { return }
        guard !entries.isEmpty else {
            entries = other
            return
        }
        merged.removeAll(keepingCapacity: true)
        merged.reserveCapacity(entries.count + other.count)
        var (left, right) = (0, 0)
        while left < entries.count && right < other.count {
            let (a, b) = (entries[left], other[right])
            if a.id == b.id {
                merged.append(RankedEntry(id: a.id, plays: a.plays &+ b.plays))
                left += 1
                right += 1
            } else if a.id < b.id {
                merged.append(a)
                left += 1
            } else {
                merged.append(b)
                right += 1
            }
        }
        merged.append(contentsOf: entries[left...])
        merged.append(contentsOf: other[right...])
        swap(&entries, &merged)
    }
}
