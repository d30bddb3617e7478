/// One entry of a ranked list: a subject and its plays in one bucket (or one layer's window).
public struct RankedEntry: Hashable, Sendable, RankedByPlays {
    /// The subject's id: a track's, or a creator's.
    public var id: Int64
    public var plays: Int64

    public init(id: Int64, plays: Int64) {
        self.id = id
        self.plays = plays
    }
}

/// Sorted access to one list of tracks by plays descending, read in growing chunks so that a
/// ranking that stops early reads little, and one that goes deep makes few round trips.
public struct RankedList {
    private let fetch: (_ offset: Int, _ after: RankedEntry?, _ limit: Int) throws -> [RankedEntry]
    private var buffer: [RankedEntry] = []
    private var position = 0
    private var fetched = 0
    private var last: RankedEntry?
    private var chunk: Int
    private var exhausted = false

    /// - Parameter fetch: returns up to `limit` entries from `offset` on, by plays descending.
    public init(firstChunk: Int = 8, fetch: @escaping (_ offset: Int, _ limit: Int) throws -> [RankedEntry]) {
        self.fetch = { offset, _, limit in try fetch(offset, limit) }
        chunk = max(1, firstChunk)
    }

    /// A list read by seeking: `seek` returns up to `limit` entries ranked after `after` (by plays
    /// descending, ties by track id ascending; from the first entry when `after` is nil), so a
    /// store's index is entered where the last chunk ended instead of stepping over every entry
    /// read before it (`LIMIT … OFFSET`).
    public init(firstChunk: Int = 8, seek: @escaping (_ after: RankedEntry?, _ limit: Int) throws -> [RankedEntry]) {
        self.fetch = { _, after, limit in try seek(after, limit) }
        chunk = max(1, firstChunk)
    }

    /// A list held in memory, read as deep as the ranking goes (`PartialRanking`).
    public static func inMemory(_ ranking: PartialRanking) -> RankedList {
        RankedList(firstChunk: 64) { offset, limit in ranking.entries(from: offset, limit: limit) }
    }

    public mutating func next() throws -> RankedEntry? {
        if position == buffer.count {
            guard !exhausted else { return nil }
            buffer = try fetch(fetched, last, chunk)
            position = 0
            fetched += buffer.count
            last = buffer.last ?? last
            exhausted = buffer.count < chunk
            chunk = min(chunk * 2, 4_096)
            guard !buffer.isEmpty else { return nil }
        }
        defer { position += 1 }
        return buffer[position]
    }
}

/// Entries by plays descending, ties by track id, sorted only as deep as they are read: a binary
/// heap from which the order is popped on demand, the popped prefix kept for the next read. A
/// ranking reads a realtime window a few hundred entries deep, so building the heap (linear)
/// replaces sorting every track the window holds each time the window changes. Not `Sendable`:
/// one reader thread's.
public final class PartialRanking {
    private var heap: [RankedEntry]
    private var prefix: [RankedEntry] = []

    /// `entries` in any order.
    public init(_ entries: [RankedEntry]) {
        heap = entries
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    public var isEmpty: Bool { heap.isEmpty && prefix.isEmpty }

    /// Up to `limit` entries in rank order from `offset` on.
    public func entries(from offset: Int, limit: Int) -> [RankedEntry] {
        let end = offset + limit
        while prefix.count < end, let first = heap.first {
            prefix.append(first)
            let last = heap.removeLast()
            if !heap.isEmpty {
                heap[0] = last
                siftDown(0)
            }
        }
        return offset < prefix.count ? Array(prefix[offset..<min(end, prefix.count)]) : []
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let best = right < heap.count && RankedEntry.ranksAbove(heap[right], heap[left]) ? right : left
            guard RankedEntry.ranksAbove(heap[best], heap[parent]) else { return }
            heap.swapAt(parent, best)
            parent = best
        }
    }
}

@available(*, unavailable)
extension PartialRanking: Sendable {}

/// Exact top-k over a sum of ranked lists — Fagin's threshold algorithm (Fagin, Lotem, Naor,
/// "Optimal aggregation algorithms for middleware", 2001).
///
/// A track's score is the sum of its plays over all lists (each list one rollup bucket of the
/// range, or the realtime layer's window). Every track met by sorted access is scored exactly
/// at once (`score`, a random access). The last plays read from a list bound every entry not
/// read yet, so their sum — the threshold — bounds the score of every track not seen yet: once
/// the k-th best score is above it, no unseen track can enter the ranking.
///
/// Any order of sorted accesses keeps that bound. This one reads each list once, then always the
/// list whose last plays divided by the entries read from it is highest: under Zipf popularity a
/// list's plays at depth d fall like c/d, so a read there lowers the threshold by about c/d², and
/// this order reads each list about √c deep — a month deeper than an edge hour, but not 700 times
/// deeper, which would meet (and score) many more tracks. It stops after a few hundred entries
/// of the big lists; uniform counts read every list to its end, which is still exact.
public enum ThresholdTopK {
    public static func top(limit: Int, lists: inout [RankedList], score: (Int64) throws -> TrackPlays) throws -> [TrackPlays] {
        guard limit > 0 else { return [] }
        var best = TopTracks(limit: limit)
        var seen = Set<Int64>()
        var lastPlays = [Int64](repeating: 0, count: lists.count)
        var exhausted = [Bool](repeating: false, count: lists.count)
        var reads = [Int](repeating: 0, count: lists.count)
        var threshold: Int64 = 0

        func read(_ index: Int) throws {
            let previous = lastPlays[index]
            reads[index] += 1
            if let entry = try lists[index].next() {
                lastPlays[index] = entry.plays
                if seen.insert(entry.id).inserted {
                    let candidate = try score(entry.id)
                    if candidate.plays > 0 { best.offer(candidate) }
                }
            } else {
                lastPlays[index] = 0
                exhausted[index] = true
            }
            threshold = threshold - previous + lastPlays[index]
        }

        for index in lists.indices { try read(index) }
        while true {
            // An unseen track scores at most the threshold; ties rank by track id, so only a
            // k-th score strictly above it settles the ranking.
            if let weakest = best.weakestIfFull, weakest.plays > threshold { break }
            var next: Int?
            var bestGain = -1.0
            for index in lists.indices where !exhausted[index] {
                let gain = Double(lastPlays[index]) / Double(reads[index])
                if gain > bestGain { bestGain = gain; next = index }
            }
            guard let next else { break }
            try read(next)
        }
        return best.sorted()
    }
}

/// The best `limit` tracks seen so far: a min-heap whose root is the weakest kept track.
public struct TopTracks {
    public let limit: Int
    private var heap: [TrackPlays] = []

    public init(limit: Int) { self.limit = limit }

    /// The weakest kept track once `limit` tracks are kept.
    public var weakestIfFull: TrackPlays? { heap.count == limit ? heap.first : nil }

    private static func ranksBelow(_ a: TrackPlays, _ b: TrackPlays) -> Bool { TrackPlays.ranksAbove(b, a) }

    public mutating func offer(_ candidate: TrackPlays) {
        guard limit > 0 else { return }
        if heap.count < limit {
            heap.append(candidate)
            siftUp(heap.count - 1)
        } else if Self.ranksBelow(heap[0], candidate) {
            heap[0] = candidate
            siftDown(0)
        }
    }

    /// The kept tracks, best first.
    public func sorted() -> [TrackPlays] { heap.sorted(by: TrackPlays.ranksAbove) }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.ranksBelow(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var weakest = parent
            for child in [2 * parent + 1, 2 * parent + 2] where child < heap.count && Self.ranksBelow(heap[child], heap[weakest]) {
                weakest = child
            }
            guard weakest != parent else { return }
            heap.swapAt(parent, weakest)
            parent = weakest
        }
    }
}
