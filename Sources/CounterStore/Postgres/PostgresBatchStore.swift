import CounterpointCore
import PostgresDB

/// The batch layer on PostgreSQL: replaces the counts of hour ranges with a batch run's rows,
/// keeps the day and month rollups in the same transaction, records coverage and runs.
///
/// A replacement is one READ COMMITTED transaction: readers use REPEATABLE READ snapshots, so
/// they see all of it or none of it, and consumers keep writing `realtime_counts` meanwhile
/// (no table they touch is locked). A transaction-scoped advisory lock makes concurrent batch
/// writers take turns, since each rewrites `coverage` from what it read.
///
/// Not `Sendable`: use it from one thread. After a lost connection a call throws
/// `PostgresError` (kind `.connection`), nothing of the run is kept, and the next call reconnects.
public final class PostgresBatchStore: BatchWriter {
    public struct Configuration: Sendable, Hashable {
        /// Rows buffered, summed and sorted by (track, hour) before they are sent, so that the
        /// upserts sweep the primary key in order. 24 bytes a row. Default 1 Mi.
        public var sortBufferRows: Int = 1 << 20
        /// Rows per INSERT statement (four array parameters). Default 200 Ki.
        public var rowsPerStatement: Int = 200_000

        public init() {}
    }

    /// Key of the advisory lock batch writers take turns on ("Countbat").
    static let writerLock: Int64 = 0x436F_756E_7462_6174

    private let database: PostgresDatabase
    private let configuration: Configuration

    /// Connects at once (an unreachable database fails here) and creates or migrates the schema.
    public init(url: String, configuration: Configuration = Configuration()) throws {
        database = PostgresDatabase(url: url) { try PostgresSchema.migrate($0) }
        self.configuration = configuration
        _ = try database.connection()
    }

    @discardableResult
    public func replace(ranges: [HourRange], startedAt: Int64, sources: [HourSource],
                        rows: (BatchRowWriter) throws -> BatchRun) throws -> BatchRun {
        let replaced = try ReplaceTarget(ranges)
        let target = replaced.coverage
        let pieces = replaced.pieces
        return try database.withConnection { connection in
            try connection.write(isolation: .readCommitted) { db in
                try db.query("SELECT pg_advisory_xact_lock($1)", [Self.writerLock])
                // The old hours leave the rollups before they go, the new ones join them after.
                try PostgresRollups.apply(pieces, sign: -1, db)
                for range in target.ranges {
                    try db.query("DELETE FROM batch_hours WHERE hour >= $1 AND hour < $2", [range.lower.index, range.upper.index])
                }
                let sink = PostgresBatchRowSink(db, target: replaced, configuration: configuration)
                let run = try rows(BatchRowWriter(sink: sink.write))
                try sink.finish()
                try PostgresRollups.apply(pieces, sign: +1, db)
                try PostgresRollups.dropEmptyBuckets(pieces, db)
                return try replaced.finishReplacement(run, sources: sources, in: db, PostgresBatchTables.self)
            }
        }
    }

    public func coverage() throws -> Coverage {
        try database.withConnection { try PostgresBatchTables.coverage($0) }
    }

    public func hourSources() throws -> [Hour: HourSource] {
        try database.withConnection { connection in
            try connection.read { try PostgresBatchTables.sources($0) }
        }
    }

    public func recentRuns(limit: Int) throws -> [BatchRun] {
        try database.withConnection { connection in
            try connection.read { try PostgresBatchTables.recentRuns(limit: limit, $0) }
        }
    }
}

@available(*, unavailable)
extension PostgresBatchStore: Sendable {}

/// Buffers a run's rows — plays and dimension counts — and merges each full buffer into
/// `batch_hours`, summed and in key order (`PostgresCounterRows`); a key in two buffers adds
/// its plays and merges its blobs.
private final class PostgresBatchRowSink {
    private let db: PostgresConnection
    private let target: ReplaceTarget
    private let configuration: PostgresBatchStore.Configuration
    private var buffer: [BufferedRow] = []
    /// The buffered rows' dimension counts, back to back (as `BatchRowSink` keeps them).
    private var arena: [UInt8] = []
    private var rows = PostgresCounterRows(.batchHours)

    init(_ db: PostgresConnection, target: ReplaceTarget, configuration: PostgresBatchStore.Configuration) {
        self.db = db
        self.target = target
        self.configuration = configuration
    }

    func write(_ row: CountRow, dimensions: [UInt8]) throws {
        guard try target.admits(row) else { return }
        buffer.append(BufferedRow(row: row, dimensions: arena.count..<arena.count + dimensions.count))
        arena.append(contentsOf: dimensions)
        if buffer.count >= max(1, configuration.sortBufferRows) { try drain() }
    }

    func finish() throws {
        try drain()
    }

    private func drain() throws {
        guard !buffer.isEmpty else { return }
        buffer.sort { CountRow.byTrackThenHour($0.row, $1.row) }
        rows.removeAll()
        rows.reserveCapacity(buffer.count)
        try arena.withUnsafeBytes { arena in
            for buffered in buffer {
                try rows.append(buffered.row.trackID, buffered.row.hour.index, plays: buffered.row.plays,
                                dimensions: UnsafeRawBufferPointer(rebasing: arena[buffered.dimensions]))
            }
        }
        try rows.write(on: db, chunkRows: configuration.rowsPerStatement)
        buffer.removeAll(keepingCapacity: true)
        arena.removeAll(keepingCapacity: true)
    }
}

/// The `coverage`, `batch_runs`, `batch_run_rejections` and `hour_sources` tables.
enum PostgresBatchTables: BatchRecordTables {
    static func coverage(_ db: PostgresConnection) throws -> Coverage {
        let result = try db.query("SELECT lower, upper FROM coverage ORDER BY lower")
        return Coverage((0..<result.rowCount).map { row in
            HourRange(Hour(index: result.int64(row: row, column: 0)), Hour(index: result.int64(row: row, column: 1)))
        })
    }

    static func saveCoverage(_ coverage: Coverage, _ db: PostgresConnection) throws {
        try db.query("DELETE FROM coverage")
        for range in coverage.ranges {
            try db.query("INSERT INTO coverage (lower, upper) VALUES ($1, $2)", [range.lower.index, range.upper.index])
        }
    }

    /// What each hour was computed from, in the run's transaction (see `HourSource`).
    static func saveSources(_ sources: [HourSource], runID: Int64, _ db: PostgresConnection) throws {
        for source in sources {
            try db.query("""
                INSERT INTO hour_sources (hour, fingerprint, files, bytes, run_id) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (hour) DO UPDATE SET fingerprint = excluded.fingerprint, files = excluded.files,
                                                 bytes = excluded.bytes, run_id = excluded.run_id
                """, [source.hour.index, source.fingerprint, source.files, source.bytes, runID])
        }
    }

    static func sources(_ db: PostgresConnection) throws -> [Hour: HourSource] {
        let result = try db.query("SELECT hour, fingerprint, files, bytes FROM hour_sources")
        var sources: [Hour: HourSource] = [:]
        for row in 0..<result.rowCount {
            let hour = Hour(index: result.int64(row: row, column: 0))
            sources[hour] = HourSource(hour: hour, fingerprint: result.string(row: row, column: 1),
                                       files: Int(result.int64(row: row, column: 2)), bytes: result.int64(row: row, column: 3))
        }
        return sources
    }

    static func insertRun(_ run: BatchRun, _ db: PostgresConnection) throws -> Int64 {
        let id = try db.query("""
            INSERT INTO batch_runs (range_lower, range_upper, started_at, finished_at, events_read, valid,
                                    duplicates, rejected, tracks, rows)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id
            """, [run.range.lower.index, run.range.upper.index, run.startedAt, run.finishedAt, run.eventsRead,
                  run.valid, run.duplicates, run.rejected, run.tracks, run.rows]).singleInt64 ?? 0
        for (reason, count) in run.rejectedByReason {
            try db.query("INSERT INTO batch_run_rejections (run_id, reason, count) VALUES ($1, $2, $3)", [id, reason, count])
        }
        return id
    }

    static func recentRuns(limit: Int, _ db: PostgresConnection) throws -> [BatchRun] {
        let result = try db.query("""
            SELECT id, range_lower, range_upper, started_at, finished_at, events_read, valid, duplicates,
                   rejected, tracks, rows
            FROM batch_runs ORDER BY id DESC LIMIT $1
            """, [max(0, limit)])
        var runs: [BatchRun] = (0..<result.rowCount).map { row in
            let value = { (column: Int) in result.int64(row: row, column: column) }
            return BatchRun(id: value(0), range: HourRange(Hour(index: value(1)), Hour(index: value(2))),
                            startedAt: value(3), finishedAt: value(4), eventsRead: Int(value(5)), valid: Int(value(6)),
                            duplicates: Int(value(7)), rejected: Int(value(8)), rejectedByReason: [:],
                            tracks: Int(value(9)), rows: Int(value(10)))
        }
        for index in runs.indices {
            let reasons = try db.query("SELECT reason, count FROM batch_run_rejections WHERE run_id = $1", [runs[index].id])
            for row in 0..<reasons.rowCount {
                runs[index].rejectedByReason[reasons.string(row: row, column: 0)] = Int(reasons.int64(row: row, column: 1))
            }
        }
        return runs
    }
}
