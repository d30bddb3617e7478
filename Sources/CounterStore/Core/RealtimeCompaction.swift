import CounterpointCore

/// The compaction of realtime rows the batch layer has made obsolete — those of the hours its
/// coverage holds — written once over any `StoreDialect`, inside the caller's transaction. Their
/// dimension counts and listener sketches go with them: columns of the same rows.
enum RealtimeCompaction {
    /// Deletes up to `maxRows` realtime rows of the hours `coverage` holds, oldest first, every
    /// subject kind's (the creators' first). Returns the number of rows deleted and the ranges of
    /// `coverage` it deleted from, which the caller stamps (`RealtimeHourStamps.stampDeletions`).
    static func delete<D: StoreDialect>(covered coverage: Coverage, maxRows: Int, _ db: D) throws -> (rows: Int, from: Coverage) {
        var budget = max(0, maxRows)
        var deleted = 0
        var deletedFrom: [HourRange] = []
        for kind in SubjectKind.allCases.reversed() {
            let table = Catalogue.realtime(kind)
            let (hour, id) = (table.keys.first, table.keys.second)
            for covered in coverage.ranges where budget > 0 {
                let (lower, upper) = (SQLValue.integer(covered.lower.index), SQLValue.integer(covered.upper.index))
                // The row just past the budget bounds the delete: (hour, id) is the key order.
                var stop: (hour: SQLValue, id: SQLValue)?
                try db.query("""
                    SELECT \(hour), \(id) FROM \(table.name) WHERE \(hour) >= $1 AND \(hour) < $2
                    ORDER BY \(hour), \(id) LIMIT 1 OFFSET $3
                    """, [lower, upper, .integer(Int64(budget))]) { row in
                    stop = (.integer(row.int64(at: 0)), .integer(row.int64(at: 1)))
                }
                let rows = if let stop {
                    try db.changedRows("DELETE FROM \(table.name) WHERE \(hour) >= $1 AND (\(hour), \(id)) < ($2, $3)",
                                       [lower, stop.hour, stop.id])
                } else {
                    try db.changedRows("DELETE FROM \(table.name) WHERE \(hour) >= $1 AND \(hour) < $2", [lower, upper])
                }
                if rows > 0 { deletedFrom.append(covered) }
                deleted += rows
                budget -= rows
            }
        }
        return (deleted, Coverage(deletedFrom))
    }
}
