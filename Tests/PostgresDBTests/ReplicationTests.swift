import Patience
import PostgresDB
import PostgresTestServer
import Testing

/// What a connection tells about streaming replication, on a real primary and a hot standby
/// made by `pg_basebackup -R` (docs/postgresql.md, "Standbys and failover").
@Suite("PostgreSQL standby and failover facts", .onTestThreads)
struct ReplicationTests {
    @Test("a hot standby is known as one, replays the primary's writes, reports a lag, and learns of its promotion on the same connection")
    func standbyFacts() async throws {
        let (primary, standby) = try PostgresTestServer.startWithStandby()
        defer {
            standby.stop()
            primary.stop()
        }

        let writer = try PostgresConnection(url: primary.url(database: "postgres"))
        try writer.execute("CREATE TABLE plays (id bigint PRIMARY KEY); INSERT INTO plays SELECT generate_series(1, 1000)")
        try await standby.waitForReplay(of: primary.currentWALPosition())

        let reader = try PostgresConnection(url: standby.url(database: "postgres"))
        #expect(try reader.isHotStandby())
        #expect(try !writer.isHotStandby())
        #expect(try reader.query("SELECT count(*) FROM plays").singleInt64 == 1000)
        let lag = "SELECT \(PostgresConnection.standbyLagMillisecondsSQL)"
        #expect(try writer.query(lag).optionalInt64(row: 0, column: 0) == nil)
        #expect(try (reader.query(lag).optionalInt64(row: 0, column: 0) ?? -1) >= 0)
        let refused = try #require(throws: PostgresError.self) { try reader.execute("INSERT INTO plays VALUES (0)") }
        #expect(refused.sqlState == "25006")

        try primary.stopImmediately()
        try standby.promote()
        #expect(try reader.query("SELECT count(*) FROM plays").singleInt64 == 1000)
        #expect(try !reader.isHotStandby())
        #expect(try reader.query(lag).optionalInt64(row: 0, column: 0) == nil)
        try reader.execute("INSERT INTO plays VALUES (0)")
    }

    @Test("a multi-host URI with target_session_attrs=read-write reaches the primary, and the promoted standby once the primary is gone")
    func multiHostFollowsThePrimary() throws {
        let (primary, standby) = try PostgresTestServer.startWithStandby()
        defer {
            standby.stop()
            primary.stop()
        }
        // The standby first, so that libpq has to skip it.
        let url = PostgresTestServer.multiHostURL([standby, primary], database: "postgres", targetSessionAttrs: "read-write")

        #expect(try PostgresConnection(url: url).serverAddress == "127.0.0.1:\(primary.port)")
        try primary.stopImmediately()
        let error = try #require(throws: PostgresError.self) { try PostgresConnection(url: url) }
        #expect(error.kind == .connection, "no writable host: \(error)")
        try standby.promote()
        let promoted = try PostgresConnection(url: url)
        #expect(promoted.serverAddress == "127.0.0.1:\(standby.port)")
        #expect(try !promoted.isHotStandby())
    }
}
