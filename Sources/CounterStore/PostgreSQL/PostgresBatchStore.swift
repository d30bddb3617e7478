import CounterpointCore
import PostgresDB

/// The batch layer on PostgreSQL: runs `BatchReplacement` in one transaction.
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
        /// Rows per statement where rows go as array parameters (finding and merging the rows
        /// that exist); rows copied in go in one stream. Default 200 Ki.
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
        let target = try ReplaceTarget(ranges)
        return try database.withConnection { connection in
            try connection.write(isolation: .readCommitted) { db in
                try db.query("SELECT pg_advisory_xact_lock($1)", [Self.writerLock])
                return try BatchReplacement.replace(target, sources: sources, sortBufferRows: configuration.sortBufferRows,
                                                    in: PostgresDialect(db, chunkRows: configuration.rowsPerStatement, soleWriter: true), rows: rows)
            }
        }
    }

    public func coverage() throws -> Coverage {
        try database.withConnection { try BatchRecords.coverage(PostgresDialect($0)) }
    }

    public func hourSources() throws -> [Hour: HourSource] {
        try database.withConnection { connection in
            try connection.read { try BatchRecords.sources(PostgresDialect($0)) }
        }
    }

    public func recentRuns(limit: Int) throws -> [BatchRun] {
        try database.withConnection { connection in
            try connection.read { try BatchRecords.recentRuns(limit: limit, PostgresDialect($0)) }
        }
    }
}

@available(*, unavailable)
extension PostgresBatchStore: Sendable {}
