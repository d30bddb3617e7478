import Foundation
import PostgresDB
import Runtime

/// Which engine holds the stores, as `--store` (env `COUNTERPOINT_STORE`) says: nothing means
/// the SQLite files under the data directory (docs/architecture.md); a `postgresql://` or `postgres://`
/// connection URI (libpq's syntax) means PostgreSQL or a compatible engine (docs/postgresql.md).
///
/// The one place stores are opened: the commands open writers and readers through it and
/// never name a backend's types.
public enum StoreBackend: Sendable, Hashable, CustomStringConvertible {
    case sqlite(StoreLocation)
    case postgres(url: String)

    /// Parses a `--store` value. Empty or nil → SQLite under `dataDirectory`; a PostgreSQL URI
    /// → PostgreSQL (libpq's complaint, as a `PostgresError`, if libpq cannot read it; the
    /// libpq environment — `PGPASSFILE`, `PGHOST`, `PGSSLROOTCERT`, … — fills in what it leaves
    /// out); anything else throws `CounterStoreError.unsupportedStore`.
    public init(store: String?, dataDirectory: String) throws {
        let value = store?.trimmingCharacters(in: .whitespaces) ?? ""
        if value.isEmpty {
            self = .sqlite(StoreLocation(directory: dataDirectory))
        } else if value.hasPrefix("postgresql://") || value.hasPrefix("postgres://") {
            // Read by libpq itself, so every parameter it knows is accepted (several hosts,
            // sslmode, target_session_attrs, host=/a/socket/directory, …) and nothing else.
            try PostgresConnectionString.validate(value)
            self = .postgres(url: value)
        } else {
            throw CounterStoreError.unsupportedStore(PostgresConnectionString.redacted(value))
        }
    }

    /// The realtime layer's writer (one per consumer process). For PostgreSQL this connects
    /// and migrates now: an unreachable or misconfigured database throws a one-line `PostgresError`.
    public func openRealtimeWriter() throws -> any RealtimeWriter {
        switch self {
        case let .sqlite(location): try SQLiteRealtimeStore(location: location)
        case let .postgres(url): try PostgresRealtimeStore(url: url)
        }
    }

    /// The batch layer's writer.
    public func openBatchWriter() throws -> any BatchWriter {
        switch self {
        case let .sqlite(location): try SQLiteBatchStore(location: location)
        case let .postgres(url): try PostgresBatchStore(url: url)
        }
    }

    /// The layers a reader reads (one per server thread).
    public func openLayers() throws -> any LayerReads {
        switch self {
        case let .sqlite(location): try SQLiteLayers(location: location)
        case let .postgres(url): try PostgresLayers(url: url)
        }
    }

    /// A merged reader over `openLayers()` (one per server thread).
    public func openReader() throws -> CounterReader {
        try CounterReader(layers: openLayers())
    }

    /// True when `error` says the store's connection was lost or reached a server that cannot
    /// write (a PostgreSQL restart or failover): what failed did not commit, and the same call
    /// on a new connection may succeed. SQLite's failures are never this.
    public static func lostConnection(_ error: any Error) -> Bool {
        if let error = error as? PostgresError { return error.kind == .connection }
        if case CounterStoreError.standbyNotWritable? = error as? CounterStoreError { return true }
        return false
    }

    /// "no free space on <the data directory>" when `error`, a failure to open or write the
    /// SQLite stores, came from a full disk: SQLite says "database or disk is full" only when a
    /// write ran out; an open that cannot make its `-shm` file says it cannot open the file,
    /// and a file that cannot grow gives a disk I/O error, so those are checked against the
    /// file system's free space. nil for any other failure, and for PostgreSQL (whose disk is
    /// the server's).
    public func fullDiskCause(of error: any Error) -> String? {
        guard case let .sqlite(location) = self, let failure = error as? any StoreFailure else { return nil }
        switch failure.failureKind {
        case .resourcesExhausted:
            return FreeSpace.cause(at: location.directory)
        case .ioError, .unreachable:
            return FreeSpace.isExhausted(at: location.directory) ? FreeSpace.cause(at: location.directory) : nil
        default:
            return nil
        }
    }

    /// `error` as logs, `/v1/status` and the commands' last line say it: its full-disk cause
    /// first, when it has one.
    public func describe(_ error: any Error) -> String {
        fullDiskCause(of: error).map { "\($0): \(error)" } ?? "\(error)"
    }

    /// True when `error` says the servers of a URI that asks for a writable one
    /// (`target_session_attrs=read-write` or `primary`) answered, but only as standbys: a primary
    /// gone and not yet replaced. A writer that never reached the store may wait for the
    /// promotion, unlike for a store that cannot be reached or that refuses it — or a URI that
    /// names a standby alone (`CounterStoreError.standbyNotWritable`, refused at start).
    public static func awaitingPrimary(_ error: any Error) -> Bool {
        (error as? PostgresError)?.foundOnlyStandbys == true
    }

    /// What a command that waits says when `awaitingPrimary`: the one wording of the logs.
    public static let awaitingPrimaryCause = "only standbys answered, no primary yet (a failover under way)"

    /// True when every read is a round trip to a database server (PostgreSQL), so that asking
    /// for many rows in one statement costs about what asking for one does; false for SQLite,
    /// whose reads are calls into the process's own library.
    public var readsAreRoundTrips: Bool {
        if case .postgres = self { return true }
        return false
    }

    /// For logs and the load-test report: the directory, or the URI without its password.
    public var description: String {
        switch self {
        case let .sqlite(location): "sqlite:\(location.directory)"
        case let .postgres(url): PostgresConnection.redactedURL(url)
        }
    }
}
