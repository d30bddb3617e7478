import CounterpointCore
import SQLiteDB

/// The single writer of batch.sqlite: replaces the counts of hour ranges with a batch run's
/// authoritative rows and records coverage and runs. Not `Sendable`: use it from one thread.
public final class BatchStore {
    public struct Configuration: Sendable, Hashable {
        /// Connection settings; see `DatabaseConfiguration` for the defaults.
        public var database: DatabaseConfiguration = .default
        /// Page cache during `replace`, in KiB: a run rewrites pages all over the per-track
        /// index, and keeping them in memory until commit saves re-reading them. Default 512 MiB.
        public var replaceCacheSizeKiB: Int = 512 * 1024
        /// Rows buffered and sorted by (track, hour) before they are written, so that writes
        /// sweep the index in order. Bounds `replace`'s own memory (24 bytes a row). Default 1 Mi.
        public var sortBufferRows: Int = 1 << 20

        public init() {}
    }

    private let database: Database
    private let configuration: Configuration

    public init(location: StoreLocation, configuration: Configuration = Configuration()) throws {
        try StoreFile.createDirectory(location.directory)
        database = try StoreFile.openWriter(path: location.batchPath, schema: .batch, configuration: configuration.database)
        self.configuration = configuration
    }

    /// Atomically replaces every row of the hours in `range` with the rows `rows` writes, marks
    /// the range covered and records `run` — see `replace(ranges:startedAt:rows:)`.
    @discardableResult
    public func replace(range: HourRange, run: BatchRun, rows: (BatchRowWriter) throws -> Void) throws -> BatchRun {
        try replace(ranges: [range], startedAt: run.startedAt) { writer in
            try rows(writer)
            return run
        }
    }

    /// Atomically replaces every row of the hours in `ranges` with the rows `rows` writes,
    /// marks the ranges covered and records the run that `rows` returns once it has written
    /// everything (its statistics are known only then) — in ONE transaction: a reader sees
    /// the old counts or the new, never a mix (WAL readers keep the snapshot their
    /// transaction started with), and an error or a killed process changes nothing.
    ///
    /// Rows may arrive in any order; rows for the same (track, hour) add up; rows with 0 plays
    /// are skipped. A row outside `ranges` throws `CounterStoreError.rowOutsideRange` and
    /// nothing is changed. The run is recorded over the span of `ranges`; returns it as
    /// recorded, with its id.
    @discardableResult
    ///
    /// `sources` (may be empty) records what hours were computed from, in the same transaction.
    public func replace(ranges: [HourRange], startedAt: Int64, sources: [HourSource] = [],
                        rows: (BatchRowWriter) throws -> BatchRun) throws -> BatchRun {
        let target = Coverage(ranges)
        guard let first = target.ranges.first, let last = target.ranges.last else {
            throw CounterStoreError.emptyRange(ranges.first ?? HourRange(Hour(index: 0), Hour(index: 0)))
        }
        let span = HourRange(first.lower, last.upper)
        try database.setCacheSize(kibibytes: configuration.replaceCacheSizeKiB)
        defer { try? database.setCacheSize(kibibytes: configuration.database.cacheSizeKiB) }

        return try database.write { db in
            // The run's id tags its rows, so the run is entered first and completed after.
            let provisional = BatchRun(range: span, startedAt: startedAt, finishedAt: startedAt, eventsRead: 0,
                                       valid: 0, duplicates: 0, rejected: 0, rejectedByReason: [:], tracks: 0, rows: 0)
            let runID = try insertRun(provisional, db)
            let hadRows = try target.ranges.contains { try hasRows(in: $0, db) }
            let sink = try BatchRowSink(database: db, target: target, runID: runID,
                                        capacity: configuration.sortBufferRows)
            var recorded = try rows(BatchRowWriter(sink: sink))
            try sink.finish()
            recorded.id = runID
            recorded.range = span
            try completeRun(recorded, db)

            if hadRows {
                // Rows of the ranges this run did not write are from an earlier run: gone now.
                let deleteStale = try db.cachedStatement(
                    "DELETE FROM batch_counts WHERE hour >= ?1 AND hour < ?2 AND run_id <> ?3")
                for range in target.ranges {
                    try deleteStale.bind(range.lower.index, at: 1)
                    try deleteStale.bind(range.upper.index, at: 2)
                    try deleteStale.bind(runID, at: 3)
                    try deleteStale.execute()
                }
            }

            var coverage = try CoverageTable.load(db)
            for range in target.ranges { coverage.insert(range) }
            try CoverageTable.save(coverage, db)
            try HourSourcesTable.save(sources, runID: runID, db)
            return recorded
        }
    }

    private func hasRows(in range: HourRange, _ db: Database) throws -> Bool {
        let select = try db.cachedStatement("SELECT 1 FROM batch_counts WHERE hour >= ?1 AND hour < ?2 LIMIT 1")
        try select.bind(range.lower.index, at: 1)
        try select.bind(range.upper.index, at: 2)
        return try select.singleInt64() != nil
    }

    private func insertRun(_ run: BatchRun, _ db: Database) throws -> Int64 {
        let insert = try db.cachedStatement("""
            INSERT INTO batch_runs (range_lower, range_upper, started_at, finished_at, events_read, valid,
                                    duplicates, rejected, tracks, rows)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
            """)
        let values: [Int64] = [run.range.lower.index, run.range.upper.index, run.startedAt, run.finishedAt,
                               Int64(run.eventsRead), Int64(run.valid), Int64(run.duplicates), Int64(run.rejected),
                               Int64(run.tracks), Int64(run.rows)]
        for (offset, value) in values.enumerated() {
            try insert.bind(value, at: offset + 1)
        }
        try insert.execute()
        return db.lastInsertedRowID
    }

    private func completeRun(_ run: BatchRun, _ db: Database) throws {
        let update = try db.cachedStatement("""
            UPDATE batch_runs SET finished_at = ?2, events_read = ?3, valid = ?4, duplicates = ?5, rejected = ?6,
                                  tracks = ?7, rows = ?8
            WHERE id = ?1
            """)
        let values: [Int64] = [run.id, run.finishedAt, Int64(run.eventsRead), Int64(run.valid), Int64(run.duplicates),
                               Int64(run.rejected), Int64(run.tracks), Int64(run.rows)]
        for (offset, value) in values.enumerated() {
            try update.bind(value, at: offset + 1)
        }
        try update.execute()

        let insertReason = try db.cachedStatement(
            "INSERT INTO batch_run_rejections (run_id, reason, count) VALUES (?1, ?2, ?3)")
        for (reason, count) in run.rejectedByReason {
            try insertReason.bind(run.id, at: 1)
            try insertReason.bind(reason, at: 2)
            try insertReason.bind(Int64(count), at: 3)
            try insertReason.execute()
        }
    }

    /// The hours the batch layer has covered.
    public func coverage() throws -> Coverage {
        try database.read { try CoverageTable.load($0) }
    }

    /// What each covered hour was last computed from, for the hours that recorded it.
    public func hourSources() throws -> [Hour: HourSource] {
        try database.read { try HourSourcesTable.load($0) }
    }

    /// The latest runs, newest first.
    public func recentRuns(limit: Int) throws -> [BatchRun] {
        try database.read { try BatchRunsTable.recent(limit: limit, $0) }
    }
}

@available(*, unavailable)
extension BatchStore: Sendable {}

/// Hands a batch run's rows to `BatchStore.replace`. Valid only inside the closure given to
/// `replace`; do not keep it.
public struct BatchRowWriter {
    fileprivate let sink: BatchRowSink

    /// Adds `plays` to (track, hour) of the run. Throws when `hour` is outside the run's range.
    public func write(trackID: Int64, hour: Hour, plays: Int64) throws {
        try sink.write(trackID: trackID, hour: hour, plays: plays)
    }
}

@available(*, unavailable)
extension BatchRowWriter: Sendable {}

/// Buffers rows, sorts each full buffer by (track, hour) and upserts it.
///
/// The upsert overwrites a row left by an earlier run (its `run_id` differs) and adds to a row
/// this run has already written (the same key in two buffers, or twice in one), so a rerun
/// rewrites pages in place instead of deleting the range first and inserting it again.
private final class BatchRowSink {
    private struct Row {
        var trackID: Int64
        var hour: Int64
        var plays: Int64
    }

    private let target: Coverage
    private let capacity: Int
    private let upsert: GroupedUpsert
    private var buffer: [Row] = []

    init(database: Database, target: Coverage, runID: Int64, capacity: Int) throws {
        self.target = target
        self.capacity = max(1, capacity)
        // ?1 is the run id of every row.
        upsert = try GroupedUpsert(database, firstRowParameter: 2, rowSuffix: ", ?1", makeSQL: { values in
            """
            INSERT INTO batch_counts (hour, track_id, plays, run_id) VALUES \(values)
            ON CONFLICT (hour, track_id) DO UPDATE SET
                plays = CASE WHEN run_id = excluded.run_id THEN plays + excluded.plays ELSE excluded.plays END,
                run_id = excluded.run_id
            """
        }, bindShared: { try $0.bind(runID, at: 1) })
    }

    func write(trackID: Int64, hour: Hour, plays: Int64) throws {
        guard target.contains(hour) else {
            throw CounterStoreError.rowOutsideRange(trackID: trackID, hour: hour, range: target.ranges[0])
        }
        guard trackID > 0, plays >= 0 else {
            throw CounterStoreError.invalidRow(trackID: trackID, hour: hour, plays: plays)
        }
        guard plays > 0 else { return }
        if buffer.isEmpty { buffer.reserveCapacity(min(capacity, 1 << 16)) }
        buffer.append(Row(trackID: trackID, hour: hour.index, plays: plays))
        if buffer.count >= capacity { try drain() }
    }

    func finish() throws {
        try drain()
    }

    private func drain() throws {
        // In the index's order the writes sweep its pages once.
        buffer.sort { $0.trackID != $1.trackID ? $0.trackID < $1.trackID : $0.hour < $1.hour }
        try upsert.write(buffer) { ($0.hour, $0.trackID, $0.plays) }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// The `coverage` table: one row per normalized range.
enum CoverageTable {
    static func load(_ db: Database) throws -> Coverage {
        var ranges: [HourRange] = []
        try db.cachedStatement("SELECT lower, upper FROM coverage ORDER BY lower").forEachRow { row in
            ranges.append(HourRange(Hour(index: row.int64(at: 0)), Hour(index: row.int64(at: 1))))
        }
        return Coverage(ranges)
    }

    static func save(_ coverage: Coverage, _ db: Database) throws {
        try db.cachedStatement("DELETE FROM coverage").execute()
        let insert = try db.cachedStatement("INSERT INTO coverage (lower, upper) VALUES (?1, ?2)")
        for range in coverage.ranges {
            try insert.bind(range.lower.index, at: 1)
            try insert.bind(range.upper.index, at: 2)
            try insert.execute()
        }
    }
}

/// The `batch_runs` and `batch_run_rejections` tables.
enum BatchRunsTable {
    static func recent(limit: Int, _ db: Database) throws -> [BatchRun] {
        let select = try db.cachedStatement("""
            SELECT id, range_lower, range_upper, started_at, finished_at, events_read, valid, duplicates,
                   rejected, tracks, rows
            FROM batch_runs ORDER BY id DESC LIMIT ?1
            """)
        try select.bind(Int64(max(0, limit)), at: 1)
        var runs: [BatchRun] = []
        try select.forEachRow { row in
            runs.append(BatchRun(
                id: row.int64(at: 0),
                range: HourRange(Hour(index: row.int64(at: 1)), Hour(index: row.int64(at: 2))),
                startedAt: row.int64(at: 3), finishedAt: row.int64(at: 4),
                eventsRead: row.int(at: 5), valid: row.int(at: 6), duplicates: row.int(at: 7),
                rejected: row.int(at: 8), rejectedByReason: [:], tracks: row.int(at: 9), rows: row.int(at: 10)))
        }
        let reasons = try db.cachedStatement("SELECT reason, count FROM batch_run_rejections WHERE run_id = ?1")
        for index in runs.indices {
            try reasons.bind(runs[index].id, at: 1)
            try reasons.forEachRow { row in
                runs[index].rejectedByReason[row.string(at: 0)] = row.int(at: 1)
            }
        }
        return runs
    }
}
