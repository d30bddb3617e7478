import Foundation
import Patience
import SQLiteDB
import Testing

@Suite("SQLite errors", .onTestThreads)
struct SQLiteErrorTests {
    @Test("a syntax error carries SQLite's message and the SQL")
    func syntaxError() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            let error = try #require(throws: SQLiteError.self) { try database.makeStatement("SELEC 1") }
            #expect(error.kind == .other)
            #expect(error.message.contains("syntax error"))
            #expect(error.operation == "SELEC 1")
            #expect(!error.isUnavailable)
        }
    }

    @Test("a constraint violation is reported with its extended code")
    func constraint() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            try database.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
            let insert = try database.makeStatement("INSERT INTO t VALUES (1)")
            try insert.execute()
            let error = try #require(throws: SQLiteError.self) { try insert.execute() }
            #expect(error.kind == .constraint)
            #expect(error.extendedCode == 1555) // SQLITE_CONSTRAINT_PRIMARYKEY
            #expect(error.description.contains("INSERT INTO t VALUES (1)"))
        }
    }

    @Test("the description is one line of bounded length, however long the statement; the whole statement stays in the error")
    func longStatementDescribedInOneLine() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            try database.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
            let rows = (1...400).map { "(\($0))" }.joined(separator: ",\n    ")
            let sql = "INSERT INTO t (x)\n  VALUES\n    \(rows),\n    (1)"
            let error = try #require(throws: SQLiteError.self) { try database.execute(sql) }
            #expect(error.operation == sql)
            let text = error.description
            #expect(!text.contains("\n"))
            #expect(text.contains("while: INSERT INTO t (x) VALUES (1), (2), (3),"))
            #expect(text.hasSuffix("…") && text.count < 400, "\(text.count) characters")
        }
    }

    @Test("a file that is not a database fails at open, as corrupt")
    func notADatabase() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/garbage.sqlite"
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
            for mode in [Database.Mode.readWrite, .readOnly] {
                let error = try #require(throws: SQLiteError.self) { try Database(path: path, mode: mode) }
                #expect(error.kind == .corrupt)
                #expect(error.isUnavailable)
            }
        }
    }

    @Test("a path in a missing directory cannot be opened")
    func cannotOpen() throws {
        try withTemporaryDirectory { directory in
            let error = try #require(throws: SQLiteError.self) {
                try Database(path: directory + "/missing/db.sqlite")
            }
            #expect(error.kind == .cannotOpen)
            #expect(error.operation.contains("missing/db.sqlite"))
        }
    }

    @Test("writing through a read-only connection fails as read-only")
    func readOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite"
            let writer = try Database(path: path)
            try writer.execute("CREATE TABLE t (x INTEGER)")
            let reader = try Database(path: path, mode: .readOnly)
            let error = try #require(throws: SQLiteError.self) { try reader.execute("INSERT INTO t VALUES (1)") }
            #expect(error.kind == .readOnly)
        }
    }

    @Test("a second writer fails as busy once the busy timeout has passed")
    func busy() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite"
            let first = try Database(path: path)
            try first.execute("CREATE TABLE t (x INTEGER)")
            var impatient = DatabaseConfiguration()
            impatient.busyTimeoutMilliseconds = 0
            let second = try Database(path: path, configuration: impatient)
            try first.write { _ in
                let error = try #require(throws: SQLiteError.self) {
                    try second.write { try $0.execute("INSERT INTO t VALUES (1)") }
                }
                #expect(error.kind == .busy)
                #expect(error.isUnavailable)
            }
        }
    }
}
