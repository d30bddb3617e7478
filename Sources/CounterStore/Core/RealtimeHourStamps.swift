import CounterpointCore

/// The realtime layer's hour stamps: for each hour with rows, the number of the last commit that
/// changed them (`realtime_hours`). Every commit that adds or deletes realtime rows stamps the
/// hours it touched with a number no earlier commit used, so two snapshots that show an hour with
/// the same stamp show the same rows of that hour, and a reader that summed the window re-reads
/// only the hours whose stamps moved (`RealtimeWindowCache`) instead of the whole window after
/// every flush.
enum RealtimeHourStamps {
    /// Stamps `hours` (ascending, as a flush's rows give them) with `change`.
    static func stamp(hours: [Int64], change: Int64, _ dialect: some StoreDialect) throws {
        guard !hours.isEmpty else { return }
        // One statement for a flush's few hours; the hours in ascending order, the same order
        // in every writer.
        let values = hours.indices.map { "($\($0 + 2), $1)" }.joined(separator: ", ")
        try dialect.run("""
            INSERT INTO realtime_hours (hour, changes) VALUES \(values)
            ON CONFLICT (hour) DO UPDATE SET changes = excluded.changes
            """, [.integer(change)] + hours.map { .integer($0) })
    }

    /// Stamps the hours of `ranges` that had rows with `change`, after a commit deleted some of
    /// their rows, and drops the stamps of those left without rows.
    static func stampDeletions(in ranges: Coverage, change: Int64, _ dialect: some StoreDialect) throws {
        for range in ranges.ranges {
            let (lower, upper) = (SQLValue.integer(range.lower.index), SQLValue.integer(range.upper.index))
            try dialect.run("UPDATE realtime_hours SET changes = $1 WHERE hour >= $2 AND hour < $3", .integer(change), lower, upper)
            try dialect.run("""
                DELETE FROM realtime_hours WHERE hour >= $1 AND hour < $2
                AND NOT EXISTS (SELECT 1 FROM realtime_counts c WHERE c.hour = realtime_hours.hour)
                """, lower, upper)
        }
    }

    /// Stamps every hour that has rows with `change` (and drops the stamps of hours without
    /// rows): after commits that did not stamp (a writer of an older version), no stamp can be
    /// trusted until this has run.
    static func stampEveryHour(change: Int64, _ dialect: some StoreDialect) throws {
        try dialect.run("DELETE FROM realtime_hours")
        // CAST: PostgreSQL would take a bare parameter in a select list for text.
        try dialect.run("INSERT INTO realtime_hours (hour, changes) SELECT DISTINCT hour, CAST($1 AS bigint) FROM realtime_counts",
                        .integer(change))
    }
}

extension [CounterRows] {
    /// The distinct values of the rows' first key, ascending (the hours of a realtime flush).
    var firstKeyValues: [Int64] {
        var values: [Int64] = []
        for rows in self {
            for key in rows.firstKeys where values.last != key { values.append(key) }
        }
        return count > 1 ? Set(values).sorted() : values
    }
}
