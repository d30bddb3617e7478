import Foundation
import Patience
import SQLiteDB
import Testing

@Suite("Database connections", .onTestThreads)
struct DatabaseTests {
    @Test("a new database is created in WAL mode with the configured pragmas")
    func createsInWALMode() throws {
        try withTemporaryDirectory { directory in
            var configuration = DatabaseConfiguration()
            configuration.cacheSizeKiB = 1234
            let database = try Database(path: directory + "/new.sqlite", configuration: configuration)
            #expect(try database.makeStatement("PRAGMA journal_mode").singleString() == "wal")
            #expect(try database.makeStatement("PRAGMA synchronous").singleInt64() == 1) // NORMAL
            #expect(try database.makeStatement("PRAGMA cache_size").singleInt64() == -1234)
            #expect(try database.makeStatement("PRAGMA busy_timeout").singleInt64() == 5_000)
            #expect(FileManager.default.fileExists(atPath: directory + "/new.sqlite"))
        }
    }

    @Test("a write transaction commits when its closure returns")
    func writeCommits() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite"
            let writer = try Database(path: path)
            try writer.execute("CREATE TABLE t (x INTEGER)")
            let inserted = try writer.write { db in
                try db.execute("INSERT INTO t VALUES (1), (2)")
                return db.changes
            }
            #expect(inserted == 2)
            let other = try Database(path: path, mode: .readOnly)
            #expect(try other.makeStatement("SELECT sum(x) FROM t").singleInt64() == 3)
        }
    }

    @Test("a write transaction rolls back everything when its closure throws")
    func writeRollsBack() throws {
        struct Abort: Error {}
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            try database.execute("CREATE TABLE t (x INTEGER)")
            #expect(throws: Abort.self) {
                try database.write { db in
                    try db.execute("INSERT INTO t VALUES (1)")
                    throw Abort()
                }
            }
            #expect(!database.isInTransaction)
            #expect(try database.makeStatement("SELECT count(*) FROM t").singleInt64() == 0)
        }
    }

    @Test("a read transaction keeps one snapshot while another connection commits")
    func readSnapshot() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite"
            let writer = try Database(path: path)
            try writer.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
            let reader = try Database(path: path, mode: .readOnly)
            let (before, after) = try reader.read { db in
                let before = try db.cachedStatement("SELECT sum(x) FROM t").singleInt64()
                try writer.write { try $0.execute("INSERT INTO t VALUES (10)") }
                let after = try db.cachedStatement("SELECT sum(x) FROM t").singleInt64()
                return (before, after)
            }
            #expect(before == 1)
            #expect(after == 1)
            #expect(try reader.cachedStatement("SELECT sum(x) FROM t").singleInt64() == 11)
        }
    }

    @Test("data_version changes when another connection commits, not otherwise")
    func dataVersion() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite"
            let writer = try Database(path: path)
            try writer.execute("CREATE TABLE t (x INTEGER)")
            let reader = try Database(path: path, mode: .readOnly)
            let first = try reader.dataVersion()
            #expect(try reader.dataVersion() == first)
            try writer.execute("INSERT INTO t VALUES (1)")
            #expect(try reader.dataVersion() != first)
        }
    }

    @Test("user_version is stored in the file")
    func userVersion() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite"
            do {
                let database = try Database(path: path)
                #expect(try database.userVersion() == 0)
                try database.setUserVersion(7)
            }
            #expect(try Database(path: path, mode: .readOnly).userVersion() == 7)
        }
    }

    @Test("the statement cache returns the same compiled statement for the same SQL")
    func statementCache() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            let first = try database.cachedStatement("SELECT ?1 + 1")
            try first.bind(Int64(41), at: 1)
            #expect(try first.singleInt64() == 42)
            let second = try database.cachedStatement("SELECT ?1 + 1")
            #expect(first === second)
            #expect(try database.cachedStatement("SELECT 2 + 1") !== first)
        }
    }

    @Test("the statement cache finds a statement again by equal SQL built anew, also after more statements than it keeps at hand")
    func statementCacheBeyondTheRecentOnes() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            // Strings built at run time: equal SQL in storage of its own each time.
            func sql(_ value: Int) -> String { "SELECT " + String(value) + " + ?1 AS answer_of_a_long_enough_statement" }
            let statements = try (0..<10).map { try database.cachedStatement(sql($0)) }
            for round in 0..<3 {
                for value in (0..<10).reversed() {
                    let statement = try database.cachedStatement(sql(value))
                    #expect(statement === statements[value])
                    try statement.bind(Int64(round), at: 1)
                    #expect(try statement.singleInt64() == Int64(value + round))
                }
            }
        }
    }
}
