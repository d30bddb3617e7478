/// A PostgreSQL database reached through one lazily opened connection that is replaced after
/// it breaks: a call fails with `PostgresError` (kind `.connection`) when the server goes
/// away, and the next call connects again — so a long-running writer or reader survives a
/// server restart by retrying, instead of holding a dead connection forever.
///
/// Not `Sendable`, like the connection it holds: one per thread.
public final class PostgresDatabase {
    public let url: String
    /// Runs on every new connection before it is used (session settings, schema checks).
    private let prepare: (PostgresConnection) throws -> Void
    private var current: PostgresConnection?

    public init(url: String, prepare: @escaping (PostgresConnection) throws -> Void = { _ in }) {
        self.url = url
        self.prepare = prepare
    }

    /// The connection, opened (and prepared) now if there is none or the last one broke.
    public func connection() throws -> PostgresConnection {
        if let current, current.isHealthy { return current }
        current = nil
        let fresh = try PostgresConnection(url: url)
        try prepare(fresh)
        current = fresh
        return fresh
    }

    /// Runs `body` on the connection; a connection failure drops it so the next call reconnects.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try connection()
        do {
            return try body(connection)
        } catch let error as PostgresError where error.kind == .connection {
            if current === connection { current = nil }
            throw error
        }
    }

    /// `withConnection`, but when a connection opened by an earlier call turns out to be lost —
    /// the server restarted or closed it while it sat idle, which libpq only notices on its next
    /// use — `body` runs once more on a new connection, instead of failing a call that never
    /// reached a live server. Only for bodies that are safe to rerun (reads).
    public func withReconnect<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let reused = current?.isHealthy == true
        do {
            return try withConnection(body)
        } catch let error as PostgresError where error.kind == .connection && reused {
            return try withConnection(body)
        }
    }

    /// Drops the connection (closing it); the next call opens a new one.
    public func disconnect() {
        current = nil
    }
}

@available(*, unavailable)
extension PostgresDatabase: Sendable {}
