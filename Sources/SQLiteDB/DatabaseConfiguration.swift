/// How a connection is tuned. Every field becomes one PRAGMA, applied in one place
/// (`Database.applyConfiguration`) right after the connection opens.
///
/// The defaults suit Counterpoint: one writer and many readers per file, in WAL mode so that
/// readers never block the writer nor the writer the readers ("WAL provides more concurrency
/// as readers do not block writers and a writer does not block readers", sqlite.org/wal.html).
public struct DatabaseConfiguration: Sendable, Hashable {
    public enum JournalMode: String, Sendable, Hashable {
        case wal, delete, truncate, persist, memory, off
    }

    public enum Synchronous: String, Sendable, Hashable {
        case off, normal, full, extra
    }

    /// `PRAGMA journal_mode`. Default `.wal`. Ignored on read-only connections, which cannot
    /// change it (the writer has already made the file WAL).
    public var journalMode: JournalMode = .wal

    /// `PRAGMA synchronous`. Default `.normal`: in WAL mode a commit is atomic and consistent
    /// but may roll back after a power loss (never after a process crash), and it costs no fsync.
    /// Counts and Kafka offsets commit together, so a rolled-back flush is simply consumed again.
    public var synchronous: Synchronous = .normal

    /// `sqlite3_busy_timeout`: how long a statement waits for a lock before failing with
    /// `SQLITE_BUSY`. Default 5,000 ms.
    public var busyTimeoutMilliseconds: Int32 = 5_000

    /// `PRAGMA cache_size` in KiB (given to SQLite as a negative number). Default 64 MiB.
    public var cacheSizeKiB: Int = 64 * 1024

    /// `PRAGMA mmap_size` in bytes: reads through a memory map instead of `read(2)`, which
    /// makes point lookups cheaper. Default 2 GiB (SQLite clamps it to its compile-time maximum).
    public var mmapSizeBytes: Int64 = 2 << 30

    /// `PRAGMA journal_size_limit` in bytes: the WAL is truncated to this after a checkpoint
    /// so a large batch transaction does not leave a large file behind. Default 64 MiB.
    public var journalSizeLimitBytes: Int64 = 64 << 20

    /// `PRAGMA wal_autocheckpoint` in pages. Default 1,000 (SQLite's own default).
    public var walAutocheckpointPages: Int = 1_000

    /// `PRAGMA temp_store = MEMORY` when true: sorters and temporary tables stay in memory.
    /// Default true.
    public var temporaryStorageInMemory: Bool = true

    public init() {}

    public static let `default` = DatabaseConfiguration()
}
