import CounterpointCore
import SQLiteDB

/// The single writer of batch.sqlite: runs `BatchReplacement` in one write transaction of the
/// file, with a page cache sized for it. Not `Sendable`: use it from one thread.
public final class SQLiteBatchStore: BatchWriter {
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
        let target = try ReplaceTarget(ranges)
        try database.setCacheSize(kibibytes: configuration.replaceCacheSizeKiB)
        defer { try? database.setCacheSize(kibibytes: configuration.database.cacheSizeKiB) }
        return try database.write { db in
            try BatchReplacement.replace(target, sources: sources, sortBufferRows: configuration.sortBufferRows,
                                         in: SQLiteDialect(db), rows: rows)
        }
    }

    public func coverage() throws -> Coverage {
        try database.read { try BatchRecords.coverage(SQLiteDialect($0)) }
    }

    public func hourSources() throws -> [Hour: HourSource] {
        try database.read { try BatchRecords.sources(SQLiteDialect($0)) }
    }

    public func recentRuns(limit: Int) throws -> [BatchRun] {
        try database.read { try BatchRecords.recentRuns(limit: limit, SQLiteDialect($0)) }
    }
}

@available(*, unavailable)
extension SQLiteBatchStore: Sendable {}
