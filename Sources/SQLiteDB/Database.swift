import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One SQLite connection. It owns its `sqlite3*` and closes it in `deinit`.
///
/// A connection is opened with `SQLITE_OPEN_NOMUTEX` ("multi-thread" mode): SQLite does not
/// serialize calls on it, so it must be used by one thread at a time — which is why it is not
/// `Sendable`. Give each thread its own `Database`; SQLite's file locking (WAL mode) makes
/// connections to the same file safe together: one writer and any number of readers.
///
/// Transactions are closure-scoped: `write { db in … }` and `read { db in … }` run the
/// closure inside one transaction, committed when it returns and rolled back when it throws.
public final class Database {
    public enum Mode: Sendable, Hashable {
        /// Read and write; creates the file if it is missing.
        case readWrite
        /// Read only; the file must exist.
        case readOnly
    }

    public private(set) var path: String
    public private(set) var mode: Mode
    private(set) var handle: OpaquePointer
    private var configuration: DatabaseConfiguration
    private var statementCache = StatementCache()
    /// Read-only connections only: opened with `immutable=1` because SQLite could not make the
    /// wal-index (`-shm`) file — a full disk — while no write-ahead log held anything.
    private var isImmutable = false
    /// An empty in-memory stand-in for a file that does not exist yet (see `standIn`): the
    /// path it stands in for.
    private var standsInFor: String?

    /// Opens (or, in `.readWrite` mode, creates) the database at `path` and applies `configuration`.
    ///
    /// Opening fails with `SQLiteError` of kind `.cannotOpen` when the file or its directory is
    /// unusable, and of kind `.corrupt` when the file is not an SQLite database.
    ///
    /// A read-only connection writes nothing and needs no free space: it never changes the
    /// journal mode, and when SQLite cannot create or size the `-shm` file of a WAL database
    /// (a full disk: `SQLITE_IOERR_SHMSIZE`, `SQLITE_FULL`) while the `-wal` file is absent or
    /// empty — so the database file holds every commit — it opens the file `immutable`
    /// ("SQLite … assumes that the database file cannot be changed", sqlite.org/uri.html), which
    /// needs no `-shm`. Once a writer is back (a `-wal` file appears) the next read transaction
    /// reopens it normally, so nothing a writer commits later goes unseen.
    public init(path: String, mode: Mode = .readWrite, configuration: DatabaseConfiguration = .default) throws {
        self.path = path
        self.mode = mode
        self.configuration = configuration
        do {
            handle = try Self.connect(path: path, mode: mode, immutable: false, configuration: configuration)
        } catch let error as SQLiteError where mode == .readOnly && error.mayNeedSpace && !Self.walHasContent(path) {
            handle = try Self.connect(path: path, mode: mode, immutable: true, configuration: configuration)
            isImmutable = true
        }
    }

    /// An empty in-memory database that `prepare` gives the file's schema, standing in for a
    /// read-only connection to `path`, which does not exist and cannot be created for lack of
    /// space: no file means no data yet, which is what the stand-in answers. Once the file
    /// exists and has content, the next read transaction opens it instead.
    public static func standIn(for path: String, configuration: DatabaseConfiguration = .default,
                               prepare: (Database) throws -> Void) throws -> Database {
        var inMemory = configuration
        inMemory.journalMode = .memory
        let database = try Database(path: ":memory:", mode: .readWrite, configuration: inMemory)
        try prepare(database)
        database.standsInFor = path
        database.path = path
        database.mode = .readOnly
        database.configuration = configuration
        return database
    }

    deinit {
        // Finalize cached statements first so that the connection closes now rather than
        // lingering as a "zombie" until they are freed (sqlite3_close_v2 allows either).
        statementCache.removeAll()
        if !handedOver { sqlite3_close_v2(handle) }
    }

    /// Set when another `Database` took over this one's handle.
    private var handedOver = false

    /// Opens and configures one connection; closes it again if configuring fails.
    private static func connect(path: String, mode: Mode, immutable: Bool,
                                configuration: DatabaseConfiguration) throws -> OpaquePointer {
        let access = mode == .readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let name = immutable ? "file:\(uriEscaped(path))?immutable=1" : path
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(name, &connection,
                                   access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | (immutable ? SQLITE_OPEN_URI : 0), nil)
        guard code == SQLITE_OK, let connection else {
            // sqlite3_open_v2 allocates a handle even on failure, to carry the message.
            let error = makeError(code, connection, "open \(path)")
            sqlite3_close_v2(connection)
            throw error
        }
        do {
            try applyConfiguration(configuration, to: connection, mode: mode, path: path)
        } catch {
            sqlite3_close_v2(connection)
            throw error
        }
        return connection
    }

    /// The one place where configuration becomes PRAGMAs. Nothing here writes to a read-only
    /// connection's file: the journal mode is set by writers only.
    private static func applyConfiguration(_ configuration: DatabaseConfiguration, to connection: OpaquePointer,
                                           mode: Mode, path: String) throws {
        sqlite3_busy_timeout(connection, configuration.busyTimeoutMilliseconds)
        if mode == .readWrite {
            // The mode is persistent in the file; the pragma answers the mode in effect.
            let requested = configuration.journalMode.rawValue
            let effective = try Statement(connection: connection, sql: "PRAGMA journal_mode = \(requested)", persistent: false)
                .singleString()
            if effective?.lowercased() != requested {
                throw SQLiteError(extendedCode: SQLITE_ERROR, message: "journal_mode is \(effective ?? "unknown"), not \(requested)",
                                  operation: "PRAGMA journal_mode = \(requested) on \(path)")
            }
        }
        try execute("""
            PRAGMA synchronous = \(configuration.synchronous.rawValue);
            PRAGMA cache_size = \(-configuration.cacheSizeKiB);
            PRAGMA mmap_size = \(configuration.mmapSizeBytes);
            PRAGMA journal_size_limit = \(configuration.journalSizeLimitBytes);
            PRAGMA wal_autocheckpoint = \(configuration.walAutocheckpointPages);
            PRAGMA temp_store = \(configuration.temporaryStorageInMemory ? "MEMORY" : "DEFAULT");
            """, on: connection)
        // Reading the schema makes a file that is not a database fail here, with SQLITE_NOTADB,
        // rather than at the first query.
        _ = try Statement(connection: connection, sql: "SELECT count(*) FROM sqlite_schema", persistent: false).singleInt64()
    }

    /// An immutable connection whose file has a writer again (a `-wal` file exists) becomes a
    /// normal read-only one. If that still fails, it stays immutable only while the log is
    /// empty — otherwise it would miss commits — and the failure is thrown.
    private func leaveImmutableIfWriterIsBack() throws {
        if let file = standsInFor {
            var status = stat()
            guard stat(file, &status) == 0, status.st_size > 0 else { return }
            let real = try Database(path: file, mode: .readOnly, configuration: configuration)
            statementCache.removeAll()
            sqlite3_close_v2(handle)
            // Take over the real connection's handle; `real` must not close it.
            handle = real.handle
            isImmutable = real.isImmutable
            real.statementCache.removeAll()
            real.handedOver = true
            standsInFor = nil
            return
        }
        guard isImmutable, Self.walExists(path) else { return }
        do {
            let fresh = try Self.connect(path: path, mode: mode, immutable: false, configuration: configuration)
            statementCache.removeAll()
            sqlite3_close_v2(handle)
            handle = fresh
            isImmutable = false
        } catch {
            if Self.walHasContent(path) { throw error }
        }
    }

    private static func walExists(_ path: String) -> Bool {
        access(path + "-wal", F_OK) == 0
    }

    private static func walHasContent(_ path: String) -> Bool {
        var status = stat()
        return stat(path + "-wal", &status) == 0 && status.st_size > 0
    }

    /// `path` as the path of a `file:` URI: `%`, `?` and `#` escaped (sqlite.org/uri.html).
    private static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    // MARK: Statements

    /// Compiles `sql` into a new statement owned by the caller.
    public func makeStatement(_ sql: String) throws -> Statement {
        try Statement(connection: handle, sql: sql, persistent: false)
    }

    /// The statement for `sql` from this connection's cache, compiled on first use with
    /// `SQLITE_PREPARE_PERSISTENT` and reset before it is returned. Bind every parameter again.
    ///
    /// The same object is returned for the same SQL, so do not use a cached statement while
    /// another use of the same SQL is still stepping through its rows.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache.statement(for: sql) {
            statement.reset()
            return statement
        }
        let statement = try Statement(connection: handle, sql: sql, persistent: true)
        statementCache.insert(statement, for: sql)
        return statement
    }

    /// Runs one or more SQL statements that return no rows (schema scripts, PRAGMAs).
    public func execute(_ sql: String) throws {
        try Self.execute(sql, on: handle)
    }

    private static func execute(_ sql: String, on connection: OpaquePointer) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(connection, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) }
            sqlite3_free(message)
            var error = makeError(code, connection, sql)
            if let text { error.message = text }
            throw error
        }
    }

    // MARK: Transactions

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`): the write lock is taken at once,
    /// waiting up to the busy timeout, so the transaction cannot fail later for want of it.
    /// Commits when `body` returns; rolls back and rethrows when `body` or the commit throws.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try cachedStatement("BEGIN IMMEDIATE").execute()
        return try finishTransaction(body)
    }

    /// Runs `body` in a read transaction (`BEGIN DEFERRED`): every statement in it reads the
    /// same snapshot of the file. SQLite's contract (sqlite.org/isolation.html): "In WAL mode,
    /// SQLite exhibits 'snapshot isolation'. When a read transaction starts, that reader
    /// continues to see an unchanging 'snapshot' of the database file as it existed at the
    /// moment in time when the read transaction started."
    ///
    /// Inside a read transaction the caller already holds (see `CounterReader`'s snapshot
    /// reuse), `body` simply runs in it: it reads that snapshot, which is what it asked for.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        if isInTransaction { return try body(self) }
        try leaveImmutableIfWriterIsBack()
        try cachedStatement("BEGIN DEFERRED").execute()
        return try finishTransaction(body)
    }

    /// Opens a read transaction that stays open across statements until `endRead()`, so that
    /// they share one snapshot and skip WAL read-lock system calls per statement.
    public func beginRead() throws {
        guard !isInTransaction else { return }
        try leaveImmutableIfWriterIsBack()
        try cachedStatement("BEGIN DEFERRED").execute()
    }

    /// Ends the transaction `beginRead()` opened (nothing to write, so COMMIT only releases it).
    public func endRead() {
        guard isInTransaction else { return }
        if (try? cachedStatement("COMMIT").execute()) == nil { rollbackIfNeeded() }
    }

    private func finishTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            let result = try body(self)
            try cachedStatement("COMMIT").execute()
            return result
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }

    /// Rolls back the open transaction, if SQLite has not already done so.
    private func rollbackIfNeeded() {
        guard isInTransaction else { return }
        // A failing ROLLBACK leaves nothing better to do: SQLite rolls back on close anyway.
        _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
    }

    /// True between BEGIN and COMMIT/ROLLBACK.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: Small facts about the connection

    /// Rows changed by the most recent INSERT, UPDATE or DELETE on this connection.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// `PRAGMA user_version`: the schema version kept in the file header.
    public func userVersion() throws -> Int {
        Int(try cachedStatement("PRAGMA user_version").singleInt64() ?? 0)
    }

    public func setUserVersion(_ version: Int) throws {
        try execute("PRAGMA user_version = \(version)")
    }

    /// `PRAGMA data_version`: changes whenever another connection has committed to the file
    /// since this connection last looked, so a reader can keep derived data until it changes.
    public func dataVersion() throws -> Int64 {
        try cachedStatement("PRAGMA data_version").singleInt64() ?? 0
    }

    /// Sets `PRAGMA cache_size` (KiB) for this connection, e.g. larger during a bulk write.
    public func setCacheSize(kibibytes: Int) throws {
        try execute("PRAGMA cache_size = \(-kibibytes)")
    }

    public enum CheckpointMode: Sendable {
        case passive, full, restart, truncate
    }

    /// Copies the WAL into the database file now (`sqlite3_wal_checkpoint_v2`). A passive
    /// checkpoint never waits; the others wait for readers as the busy timeout allows.
    public func checkpoint(_ mode: CheckpointMode = .passive) throws {
        let cMode: Int32 = switch mode {
        case .passive: SQLITE_CHECKPOINT_PASSIVE
        case .full: SQLITE_CHECKPOINT_FULL
        case .restart: SQLITE_CHECKPOINT_RESTART
        case .truncate: SQLITE_CHECKPOINT_TRUNCATE
        }
        try check(sqlite3_wal_checkpoint_v2(handle, nil, cMode, nil, nil), handle, "checkpoint \(path)")
    }
}

/// A connection is used by one thread at a time (it is opened with SQLITE_OPEN_NOMUTEX).
@available(*, unavailable)
extension Database: Sendable {}
