/// The one error this module throws: the server's SQLSTATE (nil when the failure happened
/// before a server answered, such as a refused connection), libpq's or the server's message,
/// and what was being done (the SQL, or an operation such as "connect to postgresql://…").
/// Only this module makes one (the memberwise initializer is internal).
public struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The five-character SQLSTATE, e.g. "40P01"; nil for client-side and connection failures.
    public var sqlState: String?
    /// The server's primary message, or libpq's connection message, on one line.
    public var message: String
    /// What was being done.
    public var operation: String
    /// True when the connection itself is gone or unusable (refused, reset, server shut down):
    /// the caller may retry on a new connection; the failed transaction did not commit.
    public var connectionLost: Bool

    /// The failures callers act on differently.
    public enum Kind: Sendable, Hashable {
        /// The connection failed or was lost (SQLSTATE class 08, 57P01–57P03, or no answer).
        case connection
        /// 40001 / 40P01: the transaction lost a race and can be rerun as a whole.
        case retryable
        /// Class 23: a constraint rejected a write.
        case constraint
        /// 53100 / 53200 / 53300: disk full, out of memory, too many connections.
        case resources
        /// Anything else: usually a programming or schema error.
        case other
    }

    public var kind: Kind {
        if connectionLost { return .connection }
        guard let sqlState else { return .other }
        if sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState) { return .connection }
        if sqlState == "40001" || sqlState == "40P01" { return .retryable }
        if sqlState.hasPrefix("23") { return .constraint }
        if sqlState.hasPrefix("53") { return .resources }
        return .other
    }

    /// True when a connection failed because every server that answered was a hot standby: with
    /// `target_session_attrs=read-write` (or `primary`) libpq says the session is read-only (or
    /// the server is in hot standby mode). The servers are there; a primary is missing — a
    /// failover under way — unlike a store that cannot be reached at all.
    public var foundOnlyStandbys: Bool {
        kind == .connection && (message.contains("session is read-only") || message.contains("server is in hot standby mode"))
    }

    /// True when the failure is about the database's availability, not about the request: a
    /// server answers "service unavailable" and a writer retries later.
    public var isUnavailable: Bool { kind == .connection || kind == .retryable || kind == .resources }

    /// One line: what failed, the server's message and its SQLSTATE.
    public var description: String {
        let state = sqlState.map { " (SQLSTATE \($0))" } ?? ""
        return "PostgreSQL: \(operation) failed: \(message)\(state)"
    }
}
