/// Every signal's count of a list of rows, kept compact: plays in a column of their own, the
/// other signals in a second column only once a row holds one. Rows of plays alone thus take 8
/// bytes of counts each, as before the other signals — wherever rows wait in numbers (a batch
/// unit's rows queued for the store's one writer, a sort buffer, a flush).
public struct SignalColumns: Sendable {
    private(set) var plays: [Int64] = []
    /// One per row (its plays left 0) once any row holds another signal; empty before.
    private var others: [SignalCounts] = []

    public init() {}

    public var count: Int { plays.count }

    /// Whether any row holds a signal other than plays (a writer of plays alone can leave those
    /// columns to their default of 0).
    public var hasOtherSignals: Bool { !others.isEmpty }

    /// The plays of `row`, without composing its other signals.
    public func plays(of row: Int) -> Int64 { plays[row] }

    public subscript(row: Int) -> SignalCounts {
        var counts = others.isEmpty ? SignalCounts() : others[row]
        counts.plays = plays[row]
        return counts
    }

    public mutating func append(_ counts: SignalCounts) {
        plays.append(counts.plays)
        var rest = counts
        rest.plays = 0
        if !others.isEmpty {
            others.append(rest)
        } else if !rest.isZero {
            others = Array(repeating: SignalCounts(), count: plays.count - 1)
            others.append(rest)
        }
    }

    /// Adds `sign` × `counts` to the last row.
    public mutating func addToLast(_ counts: SignalCounts, sign: Int64 = 1) {
        let last = plays.count - 1
        plays[last] += sign * counts.plays
        var rest = counts
        rest.plays = 0
        guard !rest.isZero else { return }
        if others.isEmpty { others = Array(repeating: SignalCounts(), count: plays.count) }
        others[last].add(rest, sign: sign)
    }

    public mutating func reserveCapacity(_ rows: Int) { plays.reserveCapacity(rows) }

    public mutating func removeAll() {
        plays.removeAll(keepingCapacity: true)
        others.removeAll()
    }
}

/// Rows of every signal's count per (track, hour) in one key order, as compact as
/// `SignalColumns` keeps them: what `HourCounts.sortedElements` hands over.
public struct CountRowList: RandomAccessCollection, Sendable {
    private var ids: [Int64] = []
    private var hours: [Int64] = []
    private var counts = SignalColumns()

    public init() {}

    public init(_ rows: some Sequence<CountRow>) {
        for row in rows { append(row) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ids.count }

    public subscript(index: Int) -> CountRow {
        CountRow(id: ids[index], hour: Hour(index: hours[index]), counts: counts[index])
    }

    public mutating func reserveCapacity(_ rows: Int) {
        ids.reserveCapacity(rows)
        hours.reserveCapacity(rows)
        counts.reserveCapacity(rows)
    }

    public mutating func append(_ row: CountRow) {
        ids.append(row.id)
        hours.append(row.hour.index)
        counts.append(row.counts)
    }
}
