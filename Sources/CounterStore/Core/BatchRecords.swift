import CounterpointCore

/// The batch layer's records beside its counts — `coverage` (one row per normalized range),
/// `batch_runs` with `batch_run_rejections`, and `hour_sources`: written and read once, over
/// any `StoreDialect`.
enum BatchRecords {
    static func coverage<D: StoreDialect>(_ db: D) throws -> Coverage {
        var ranges: [HourRange] = []
        try db.query("SELECT lower, upper FROM coverage ORDER BY lower", []) { row in
            ranges.append(HourRange(Hour(index: row.int64(at: 0)), Hour(index: row.int64(at: 1))))
        }
        return Coverage(ranges)
    }

    static func saveCoverage<D: StoreDialect>(_ coverage: Coverage, _ db: D) throws {
        try db.run("DELETE FROM coverage", [])
        for range in coverage.ranges {
            try db.run("INSERT INTO coverage (lower, upper) VALUES ($1, $2)", .integer(range.lower.index), .integer(range.upper.index))
        }
    }

    /// Inserts `run` with its rejections by reason; returns the id the store gave it.
    static func insertRun<D: StoreDialect>(_ run: BatchRun, _ db: D) throws -> Int64 {
        let id = try db.singleInt64("""
            INSERT INTO batch_runs (range_lower, range_upper, started_at, finished_at, events_read, valid,
                                    duplicates, rejected, tracks, rows)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id
            """, [.integer(run.range.lower.index), .integer(run.range.upper.index), .integer(run.startedAt),
                  .integer(run.finishedAt), SQLValue(run.eventsRead), SQLValue(run.valid), SQLValue(run.duplicates),
                  SQLValue(run.rejected), SQLValue(run.tracks), SQLValue(run.rows)]) ?? 0
        for (reason, count) in run.rejectedByReason {
            try db.run("INSERT INTO batch_run_rejections (run_id, reason, count) VALUES ($1, $2, $3)",
                       .integer(id), .text(reason), SQLValue(count))
        }
        return id
    }

    /// The latest `limit` runs, newest first.
    static func recentRuns<D: StoreDialect>(limit: Int, _ db: D) throws -> [BatchRun] {
        var runs: [BatchRun] = []
        try db.query("""
            SELECT id, range_lower, range_upper, started_at, finished_at, events_read, valid, duplicates,
                   rejected, tracks, rows
            FROM batch_runs ORDER BY id DESC LIMIT $1
            """, [SQLValue(max(0, limit))]) { row in
            let value = { (column: Int) in row.int64(at: column) }
            runs.append(BatchRun(id: value(0), range: HourRange(Hour(index: value(1)), Hour(index: value(2))),
                                 startedAt: value(3), finishedAt: value(4), eventsRead: Int(value(5)), valid: Int(value(6)),
                                 duplicates: Int(value(7)), rejected: Int(value(8)), rejectedByReason: [:],
                                 tracks: Int(value(9)), rows: Int(value(10))))
        }
        for index in runs.indices {
            try db.query("SELECT reason, count FROM batch_run_rejections WHERE run_id = $1", [.integer(runs[index].id)]) { row in
                runs[index].rejectedByReason[row.string(at: 0)] = Int(row.int64(at: 1))
            }
        }
        return runs
    }

    /// Records what each hour was computed from, under the run that computed it.
    static func saveSources<D: StoreDialect>(_ sources: [HourSource], runID: Int64, _ db: D) throws {
        for source in sources {
            try db.run("""
                INSERT INTO hour_sources (hour, fingerprint, files, bytes, run_id) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (hour) DO UPDATE SET fingerprint = excluded.fingerprint, files = excluded.files,
                                                 bytes = excluded.bytes, run_id = excluded.run_id
                """, .integer(source.hour.index), .text(source.fingerprint), SQLValue(source.files), .integer(source.bytes),
                .integer(runID))
        }
    }

    static func sources<D: StoreDialect>(_ db: D) throws -> [Hour: HourSource] {
        var sources: [Hour: HourSource] = [:]
        try db.query("SELECT hour, fingerprint, files, bytes FROM hour_sources", []) { row in
            let hour = Hour(index: row.int64(at: 0))
            sources[hour] = HourSource(hour: hour, fingerprint: row.string(at: 1), files: Int(row.int64(at: 2)),
                                       bytes: row.int64(at: 3))
        }
        return sources
    }

}

extension ReplaceTarget {
    /// The tail of every replacement, after the new rows are in: records `run` over the span
    /// (returned with its id), adds the target to the coverage and saves the hours' sources —
    /// all in `db`'s transaction, so none of it is kept unless the rows are.
    func finishReplacement<D: StoreDialect>(_ run: BatchRun, sources: [HourSource], in db: D) throws -> BatchRun {
        var recorded = run
        recorded.range = span
        recorded.id = try BatchRecords.insertRun(recorded, db)
        var covered = try BatchRecords.coverage(db)
        for range in coverage.ranges { covered.insert(range) }
        try BatchRecords.saveCoverage(covered, db)
        try BatchRecords.saveSources(sources, runID: recorded.id, db)
        return recorded
    }
}
