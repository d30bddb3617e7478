/// A connection's prepared statements by their SQL (`Database.cachedStatement`).
///
/// The few returned last are looked at first, by `==`: the SQL of a hot statement is a constant
/// string, and a string compared with itself is equal at a glance, where the dictionary hashes
/// every one of its hundreds of bytes on every use (a point lookup takes two statements on every
/// request; hashing their SQL was about 1 % of the reader's CPU).
struct StatementCache {
    static let recentCount = 4

    private var all: [String: Statement] = [:]
    private var recent: [(sql: String, statement: Statement)] = []

    mutating func statement(for sql: String) -> Statement? {
        if let hit = recent.first(where: { $0.sql == sql }) { return hit.statement }
        guard let statement = all[sql] else { return nil }
        remember(statement, for: sql)
        return statement
    }

    mutating func insert(_ statement: Statement, for sql: String) {
        all[sql] = statement
        remember(statement, for: sql)
    }

    /// Finalizes every statement (once nothing else holds them).
    mutating func removeAll() {
        recent.removeAll()
        all.removeAll()
    }

    private mutating func remember(_ statement: Statement, for sql: String) {
        if recent.count == Self.recentCount { recent.removeLast() }
        recent.insert((sql, statement), at: 0)
    }
}
