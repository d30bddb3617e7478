import Patience
import PostgresDB
import PostgresTestServer
import Testing

@Suite("PostgreSQL connection", .onTestThreads)
struct ConnectionTests {
    @Test("an unreachable server is a one-line error that names the URI without its password")
    func unreachable() throws {
        let error = try #require(throws: PostgresError.self) {
            try PostgresConnection(url: "postgresql://counter:secret@127.0.0.1:1/counts?connect_timeout=2")
        }
        #expect(error.kind == .connection)
        #expect(error.sqlState == nil)
        #expect(!error.description.contains("\n"))
        #expect(!error.description.contains("secret"))
        #expect(error.description.contains("postgresql://counter:***@127.0.0.1:1/counts"))
    }

    @Test("a missing database is a connection error with the server's message")
    func missingDatabase() throws {
        let server = try PostgresTestServer.shared()
        let error = try #require(throws: PostgresError.self) {
            try PostgresConnection(url: server.url(database: "no_such_database"))
        }
        #expect(error.kind == .connection)
        #expect(error.message.contains("no_such_database"))
    }

    @Test("parameters bind as text, and bigint arrays in binary — with NULLs, empty, at the extremes — through unnest")
    func parameters() throws {
        let connection = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        let row = try connection.query("SELECT $1::bigint + 1, $2::text, $3::bigint IS NULL", [Int64(41), "plays", Int64?.none])
        #expect(row.int64(row: 0, column: 0) == 42)
        #expect(row.string(row: 0, column: 1) == "plays")
        #expect(row.string(row: 0, column: 2) == "t")
        let values = (1...10_000).map(Int64.init)
        let sum = try connection.query("SELECT sum(a * b)::bigint, count(*) FROM unnest($1::bigint[], $2::bigint[]) AS t (a, b)",
                                       [PostgresInt64Array(values), PostgresInt64Array(values.map { $0 * 2 })])
        #expect(sum.int64(row: 0, column: 0) == values.reduce(0) { $0 + $1 * $1 * 2 })
        #expect(sum.int64(row: 0, column: 1) == 10_000)
        #expect(try connection.query("SELECT NULL::bigint").singleInt64 == nil)
        let withNulls = try connection.query("SELECT count(*), count(v), sum(v)::bigint FROM unnest($1::bigint[]) AS t (v)",
                                             [PostgresInt64Array([Int64?(3), nil, -4, nil])])
        #expect([0, 1, 2].map { withNulls.int64(row: 0, column: $0) } == [4, 2, -1])
        let empty = try connection.query("SELECT cardinality($1::bigint[]), $1::bigint[]::text", [PostgresInt64Array([Int64]())])
        #expect(empty.int64(row: 0, column: 0) == 0 && empty.string(row: 0, column: 1) == "{}")
        let extremes: [Int64] = [.min, -1, 0, 1, .max]
        let echoed = try connection.query("SELECT $1::bigint[]::text", [PostgresInt64Array(extremes)]).string(row: 0, column: 0)
        #expect(echoed == PostgresInt64Array(extremes).postgresText)
    }

    @Test("a server error carries its SQLSTATE, message and statement, and the connection stays usable")
    func serverError() throws {
        let connection = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        let error = try #require(throws: PostgresError.self) { try connection.query("SELECT * FROM missing_table") }
        #expect(error.sqlState == "42P01")
        #expect(error.kind == .other)
        #expect(error.message.contains("missing_table"))
        #expect(error.operation.contains("SELECT * FROM missing_table"))
        #expect(try connection.query("SELECT 7").singleInt64 == 7)
    }

    @Test("a write transaction commits when its closure returns and rolls back when it throws")
    func transactions() throws {
        let connection = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        try connection.execute("CREATE TABLE t (v bigint)")
        try connection.write { try $0.query("INSERT INTO t VALUES ($1)", [Int64(1)]) }
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try connection.write { db in
                try db.query("INSERT INTO t VALUES ($1)", [Int64(2)])
                throw Abort()
            }
        }
        #expect(throws: PostgresError.self) {
            try connection.write { db in
                try db.query("INSERT INTO t VALUES ($1)", [Int64(3)])
                try db.query("INSERT INTO t VALUES ($1)", ["not a number"])
            }
        }
        #expect(try connection.read { try $0.query("SELECT sum(v)::bigint FROM t").singleInt64 } == 1)
        #expect(!connection.inTransaction)
    }

    @Test("a read transaction sees one snapshot while another connection commits")
    func readSnapshot() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        let reader = try PostgresConnection(url: url)
        let writer = try PostgresConnection(url: url)
        try writer.execute("CREATE TABLE t (v bigint); INSERT INTO t VALUES (1)")
        try reader.read { db in
            #expect(try db.query("SELECT count(*) FROM t").singleInt64 == 1)
            try writer.query("INSERT INTO t VALUES ($1)", [Int64(2)])
            #expect(try db.query("SELECT count(*) FROM t").singleInt64 == 1)
        }
        #expect(try reader.query("SELECT count(*) FROM t").singleInt64 == 2)
    }

    @Test("a terminated connection fails with a connection error and the database reconnects on the next call")
    func reconnect() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        var connects = 0
        let database = PostgresDatabase(url: url) { _ in connects += 1 }
        let first = try database.withConnection { $0.backendPID }
        let admin = try PostgresConnection(url: url)
        try admin.query("SELECT pg_terminate_backend($1)", [first])
        let error = try #require(throws: PostgresError.self) {
            try database.withConnection { try $0.query("SELECT 1") }
        }
        #expect(error.kind == .connection)
        #expect(try database.withConnection { try $0.query("SELECT 1").singleInt64 } == 1)
        #expect(try database.withConnection { $0.backendPID } != first)
        #expect(connects == 2)
    }

    @Test("a body that finds its reused connection lost runs once more on a new one; on a new connection it fails")
    func reconnectOnce() throws {
        let url = try PostgresTestServer.shared().makeDatabase()
        let database = PostgresDatabase(url: url)
        let first = try database.withReconnect { $0.backendPID }
        try PostgresConnection(url: url).query("SELECT pg_terminate_backend($1)", [first])
        var runs = 0
        let answer = try database.withReconnect { connection in
            runs += 1
            return try connection.query("SELECT 1").singleInt64
        }
        #expect(answer == 1)
        #expect(runs == 2)

        // A connection opened by this call is not retried: its failure is the server's answer.
        let fresh = PostgresDatabase(url: url)
        runs = 0
        let error = try #require(throws: PostgresError.self) {
            try fresh.withReconnect { connection in
                runs += 1
                try connection.query("SELECT pg_terminate_backend(pg_backend_pid())")
            }
        }
        #expect(error.kind == .connection)
        #expect(runs == 1)
    }
}
