import CPostgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to a PostgreSQL server. It owns its `PGconn*` and closes it in `deinit`.
///
/// libpq connections must not be used by two threads at once, so this is not `Sendable`: give
/// each thread its own. Statements run through `query` are prepared once per connection
/// (`PQprepare`) and then executed by name (`PQexecPrepared`), so the server parses and plans
/// each distinct SQL text once per connection.
///
/// Transactions are closure-scoped, as for SQLite: `write { … }` and `read { … }` run the
/// closure inside one transaction, committed when it returns and rolled back when it throws.
public final class PostgresConnection {
    /// PostgreSQL's isolation levels (SQL standard names).
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// The URI without its password, for messages.
    public let displayURL: String
    let handle: OpaquePointer
    private var preparedNames: [String: String] = [:]
    /// `pg_is_in_recovery()` as first asked, for servers that do not report `in_hot_standby`.
    var queriedHotStandby: Bool?
    public private(set) var inTransaction = false

    /// Connects with a libpq connection URI, `postgresql://user[:password]@host[:port]/dbname[?…]`
    /// (or any conninfo string libpq accepts). Fails with a one-line `PostgresError` when the
    /// server is unreachable, refuses the login or the database does not exist.
    public init(url: String) throws {
        displayURL = PostgresConnection.redactedURL(url)
        guard let connection = PostgresConnection.connect(url) else {
            throw PostgresError(sqlState: nil, message: "out of memory", operation: "connect to \(displayURL)", connectionLost: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresConnectionString.hidingPassword(of: url, in: PostgresConnection.oneLine(PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(sqlState: nil, message: message, operation: "connect to \(displayURL)", connectionLost: true)
        }
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// How long a connection attempt may take when neither the URI (`connect_timeout`) nor the
    /// environment (`PGCONNECT_TIMEOUT`) says: libpq's own default is to wait as long as the
    /// system's TCP connect does (minutes, for a host that drops packets), and a command given
    /// a store it cannot reach should say so within seconds.
    public static let defaultConnectTimeoutSeconds = 10

    /// `PQconnectdbParams` with `url` expanded as the database name: settings in the URI
    /// override the default timeout that comes before it.
    private static func connect(_ url: String) -> OpaquePointer? {
        let timeout = getenv("PGCONNECT_TIMEOUT") == nil ? String(defaultConnectTimeoutSeconds) : nil
        let pairs = (timeout.map { [("connect_timeout", $0)] } ?? []) + [("dbname", url)]
        let keywords = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer { (keywords + values).forEach { free($0) } }
        let keywordList = keywords.map { UnsafePointer($0) } + [nil]
        let valueList = values.map { UnsafePointer($0) } + [nil]
        return PQconnectdbParams(keywordList, valueList, 1)
    }

    /// False once libpq has seen the connection break; a new `PostgresConnection` is needed.
    public var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// The server's process id for this connection (`pg_backend_pid()`), e.g. to terminate it in tests.
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// The host and port this connection reached: with a multi-host URI, the one libpq chose.
    public var serverAddress: String {
        "\(PQhost(handle).map { String(cString: $0) } ?? "?"):\(PQport(handle).map { String(cString: $0) } ?? "?")"
    }

    /// The server's `in_hot_standby` as it last reported it (PostgreSQL 14 and later report it
    /// on connecting and whenever it changes, e.g. on promotion); nil when it never did.
    var reportedHotStandby: Bool? {
        PQparameterStatus(handle, "in_hot_standby").map { String(cString: $0) == "on" }
    }

    // MARK: Statements

    /// Runs `sql` — one or more statements without parameters — through the simple-query protocol.
    public func execute(_ sql: String) throws {
        let result = PQexec(handle, sql)
        _ = try check(result, operation: sql)
    }

    /// Runs `sql` with `parameters` bound to $1, $2, … (text format, or binary for those that
    /// have one), preparing it on first use.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresParameter] = []) throws -> PostgresResult {
        let name = try preparedName(sql, parameterCount: parameters.count)
        // Each value copied into memory libpq reads until PQexecPrepared returns.
        var values: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            if let binary = parameter.postgresBinary {
                let copy = malloc(max(1, binary.count))!
                binary.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress { copy.copyMemory(from: base, byteCount: bytes.count) }
                }
                values.append(copy.assumingMemoryBound(to: CChar.self))
                lengths.append(Int32(binary.count))
                formats.append(1)
            } else {
                values.append(parameter.postgresText.flatMap { strdup($0) })
                lengths.append(0)
                formats.append(0)
            }
        }
        defer { values.forEach { free($0) } }
        let result = values.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { pointers in
                PQexecPrepared(handle, name, Int32(parameters.count), pointers.baseAddress, lengths, formats, 0)
            }
        }
        return try check(result, operation: sql)
    }

    private func preparedName(_ sql: String, parameterCount: Int) throws -> String {
        if let name = preparedNames[sql] { return name }
        let name = "counterpoint_\(preparedNames.count)"
        // Parameter types are left for the server to infer; the SQL casts where it matters.
        _ = try check(PQprepare(handle, name, sql, 0, nil), operation: "prepare \(sql)")
        preparedNames[sql] = name
        return name
    }

    /// The one place a libpq result becomes a value or a `PostgresError`: a result of one of
    /// the `accepted` statuses is a value; any other, or none, an error.
    func check(_ result: OpaquePointer?, operation: String,
               accepting accepted: [ExecStatusType] = [PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY]) throws -> PostgresResult {
        guard let result else { throw connectionError(operation: operation) }
        let owned = PostgresResult(result)
        switch PQresultStatus(result) {
        case let status where accepted.contains(status):
            return owned
        default:
            let state = counterpoint_pq_sqlstate(result).map { String(cString: $0) }
            let primary = counterpoint_pq_primary_message(result).map { String(cString: $0) }
            let message = primary ?? PostgresConnection.oneLine(PQresultErrorMessage(result))
            throw PostgresError(sqlState: state, message: message, operation: PostgresConnection.oneLine(operation),
                                connectionLost: !isHealthy)
        }
    }

    /// A call that failed without a result (libpq could not send or receive, usually because
    /// the connection is gone): libpq's message on the connection.
    func connectionError(operation: String) -> PostgresError {
        PostgresError(sqlState: nil, message: PostgresConnection.oneLine(PQerrorMessage(handle)),
                      operation: PostgresConnection.oneLine(operation), connectionLost: !isHealthy)
    }

    // MARK: Transactions

    /// Runs `body` in a read-write transaction at `isolation`; commits when it returns, rolls
    /// back when it throws.
    @discardableResult
    public func write<T>(isolation: Isolation = .readCommitted, _ body: (PostgresConnection) throws -> T) throws -> T {
        try begin("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
        return try finish(body)
    }

    /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction: every statement in it reads
    /// one snapshot, taken at its first statement.
    public func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try beginRead()
        return try finish(body)
    }

    /// Opens a `REPEATABLE READ READ ONLY` transaction for reads spanning several calls; end
    /// it with `endRead()`.
    public func beginRead() throws {
        try begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    }

    /// `beginRead()` and `sql` (a statement without parameters) as the transaction's first
    /// statement, sent together: one round trip instead of two. Returns `sql`'s rows. When
    /// `renewing`, a read `beginRead` opened on this connection ends in the same round trip.
    public func beginRead(renewing: Bool = false, firstQuery sql: String) throws -> PostgresResult {
        precondition(renewing || !inTransaction, "PostgresConnection: nested transaction")
        let end = inTransaction ? "ROLLBACK; " : ""
        // From here on `endRead()` rolls back whatever of the statements ran.
        inTransaction = true
        return try check(PQexec(handle, end + "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; " + sql), operation: sql)
    }

    /// Ends the transaction `beginRead()` opened; nothing to commit, so errors are moot.
    public func endRead() {
        rollbackIfNeeded()
    }

    private func begin(_ sql: String) throws {
        precondition(!inTransaction, "PostgresConnection: nested transaction")
        try execute(sql)
        inTransaction = true
    }

    private func finish<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            let value = try body(self)
            try execute("COMMIT")
            inTransaction = false
            return value
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }

    private func rollbackIfNeeded() {
        guard inTransaction else { return }
        inTransaction = false
        // On a broken connection the server has already rolled back; nothing to send.
        if isHealthy { _ = PQexec(handle, "ROLLBACK").map { PQclear($0) } }
    }

    // MARK: Text

    /// libpq's messages end in a newline and may span lines ("connection refused\n\tIs the
    /// server running…"): errors are shown on one line.
    static func oneLine(_ text: UnsafePointer<CChar>?) -> String {
        oneLine(text.map { String(cString: $0) } ?? "unknown error")
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// `postgresql://user:secret@host/db` → `postgresql://user:***@host/db`; a `password=`
    /// parameter is hidden too (see `PostgresConnectionString.redacted`).
    public static func redactedURL(_ url: String) -> String {
        PostgresConnectionString.redacted(url)
    }
}

@available(*, unavailable)
extension PostgresConnection: Sendable {}

private extension Substring {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
