import CounterpointCore
import SQLiteDB

/// The single writer of batch.sqlite: replaces the counts of hour ranges with a batch run's
/// authoritative rows, keeps the day and month rollups of those hours in the same
/// transaction, and records coverage and runs. Not `Sendable`: use it from one thread.
public final class BatchStore: BatchWriter {
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

    @discardableResult
    public func replace(ranges: [HourRange], startedAt: Int64, sources: [HourSource],
                        rows: (BatchRowWriter) throws -> BatchRun) throws -> BatchRun {
        let replaced = try ReplaceTarget(ranges)
        let target = replaced.coverage
        try database.setCacheSize(kibibytes: configuration.replaceCacheSizeKiB)
        defer { try? database.setCacheSize(kibibytes: configuration.database.cacheSizeKiB) }

        return try database.write { db in
            let rollups = BatchRollups(db, pieces: replaced.pieces)
            let dimensionRollups = BatchDimensionRollups(db)

            // The old hours leave the rollups before they go, the new ones join them after.
            try rollups.subtractReplacedHours()
            try dimensionRollups.subtract(hours: replaced.pieces)
            let deleteHours = try db.cachedStatement("DELETE FROM batch_hours WHERE hour >= ?1 AND hour < ?2")
            for range in target.ranges {
                try deleteHours.bind(range.lower.index, at: 1)
                try deleteHours.bind(range.upper.index, at: 2)
                try deleteHours.execute()
            }
            let sink = try BatchRowSink(database: db, target: replaced, capacity: configuration.sortBufferRows)
            let run = try rows(BatchRowWriter(sink: sink.write))
            try sink.finish()
            // The new hours join the rollups from the sums the sink gathered while writing them
            // (every row of the replaced hours went through it): no second read of the hours.
            try sink.writeRollups(db)
            try rollups.dropEmptyBuckets()
            return try replaced.finishReplacement(run, sources: sources, in: db, SQLiteBatchRecordTables.self)
        }
    }

    public func coverage() throws -> Coverage {
        try database.read { try CoverageTable.load($0) }
    }

    public func hourSources() throws -> [Hour: HourSource] {
        try database.read { try HourSourcesTable.load($0) }
    }

    public func recentRuns(limit: Int) throws -> [BatchRun] {
        try database.read { try BatchRunsTable.recent(limit: limit, $0) }
    }
}

@available(*, unavailable)
extension BatchStore: Sendable {}

/// Buffers a run's rows, sorts each full buffer by (track, hour) and inserts it; the same key
/// in two buffers (or twice in one) adds up. On the way it sums the dimension counts per
/// (track, day) and (track, month) for the rollups: in (track, hour) order those are runs of
/// consecutive rows, so this costs one merge per row and no lookups.
private final class BatchRowSink {
    private let target: ReplaceTarget
    private let capacity: Int
    private let insert: GroupedUpsert
    private var buffer: [BufferedRow] = []
    /// The buffered rows' dimension counts, back to back: plain values in the buffer sort and
    /// bind without reference counting.
    private var arena: [UInt8] = []
    private(set) var sums = RollupSums()

    init(database: Database, target: ReplaceTarget, capacity: Int) throws {
        self.target = target
        self.capacity = max(1, capacity)
        insert = try GroupedUpsert(database, firstRowParameter: 1, withBlob: true) { values in
            """
            INSERT INTO batch_hours (hour, track_id, plays, dimensions) VALUES \(values)
            ON CONFLICT (track_id, hour) DO UPDATE SET plays = plays + excluded.plays,
                dimensions = \(DimensionTables.mergeFunction)(dimensions, excluded.dimensions)
            """
        }
    }

    func write(_ row: CountRow, dimensions: [UInt8]) throws {
        guard try target.admits(row) else { return }
        if buffer.isEmpty { buffer.reserveCapacity(min(capacity, 1 << 16)) }
        buffer.append(BufferedRow(row: row, dimensions: arena.count..<arena.count + dimensions.count))
        arena.append(contentsOf: dimensions)
        if buffer.count >= capacity { try drain() }
    }

    func finish() throws {
        try drain()
    }

    func writeRollups(_ db: Database) throws {
        try sums.write(db)
    }

    private func drain() throws {
        // In the primary key's order the writes sweep its pages once.
        buffer.sort { CountRow.byTrackThenHour($0.row, $1.row) }
        try arena.withUnsafeBytes { arena in
            try insert.write(buffer, { ($0.row.hour.index, $0.row.trackID, $0.row.plays) }, blob: { row, bind in
                try bind(UnsafeRawBufferPointer(rebasing: arena[row.dimensions]))
            })
            try sums.add(sorted: buffer, arena: arena)
        }
        buffer.removeAll(keepingCapacity: true)
        arena.removeAll(keepingCapacity: true)
    }
}

/// A row waiting in `BatchRowSink`'s buffer; its dimension counts are `arena[dimensions]`.
struct BufferedRow {
    var row: CountRow
    var dimensions: Range<Int>
}

/// Keeps `batch_days` and `batch_months` equal to the sums of `batch_hours` while a run
/// replaces hours: the hours of each (day, month) piece of the target are subtracted before
/// they are deleted (the new ones are added from the sums `BatchRowSink` gathers), so the cost
/// follows the hours replaced, not the days or months around them.
private struct BatchRollups {
    let db: Database
    let pieces: [RollupPiece]

    init(_ db: Database, pieces: [RollupPiece]) {
        // (Dimension counts are rolled up by `BatchDimensionRollups`.)
        self.db = db
        self.pieces = pieces
    }

    /// Subtracts the hours of every piece from its day and month rows.
    func subtractReplacedHours() throws {
        for (table, column) in [("batch_days", "day"), ("batch_months", "month")] {
            let subtract = try db.cachedStatement("""
                INSERT INTO \(table) (track_id, \(column), plays)
                SELECT track_id, ?3, -sum(plays) FROM batch_hours WHERE hour >= ?1 AND hour < ?2 GROUP BY track_id
                ON CONFLICT (track_id, \(column)) DO UPDATE SET plays = plays + excluded.plays
                """)
            for piece in pieces {
                try subtract.bind(piece.hours.lower.index, at: 1)
                try subtract.bind(piece.hours.upper.index, at: 2)
                try subtract.bind(column == "day" ? piece.day : piece.month, at: 3)
                try subtract.execute()
            }
        }
    }

    /// Removes rollup rows left at 0 (a track that no longer plays in a rebuilt bucket), so
    /// that every rollup row, like every hour row, has plays > 0.
    func dropEmptyBuckets() throws {
        let days = try db.cachedStatement("DELETE FROM batch_days WHERE day = ?1 AND plays = 0")
        let months = try db.cachedStatement("DELETE FROM batch_months WHERE month = ?1 AND plays = 0")
        for day in Set(pieces.map(\.day)) {
            try days.bind(day, at: 1)
            try days.execute()
        }
        for month in Set(pieces.map(\.month)) {
            try months.bind(month, at: 1)
            try months.execute()
        }
    }
}

/// The SQLite tables a replacement ends by writing, for `ReplaceTarget.finishReplacement`.
private enum SQLiteBatchRecordTables: BatchRecordTables {
    static func insertRun(_ run: BatchRun, _ db: Database) throws -> Int64 { try BatchRunsTable.insert(run, db) }
    static func coverage(_ db: Database) throws -> Coverage { try CoverageTable.load(db) }
    static func saveCoverage(_ coverage: Coverage, _ db: Database) throws { try CoverageTable.save(coverage, db) }
    static func saveSources(_ sources: [HourSource], runID: Int64, _ db: Database) throws {
        try HourSourcesTable.save(sources, runID: runID, db)
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
    static func insert(_ run: BatchRun, _ db: Database) throws -> Int64 {
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
        let id = db.lastInsertedRowID
        let insertReason = try db.cachedStatement(
            "INSERT INTO batch_run_rejections (run_id, reason, count) VALUES (?1, ?2, ?3)")
        for (reason, count) in run.rejectedByReason {
            try insertReason.bind(id, at: 1)
            try insertReason.bind(reason, at: 2)
            try insertReason.bind(Int64(count), at: 3)
            try insertReason.execute()
        }
        return id
    }

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
