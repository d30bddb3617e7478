import Foundation
import Patience
import SQLiteDB
import Testing

@Suite("Statements", .onTestThreads)
struct StatementTests {
    @Test("every bindable type reads back as written")
    func roundTrip() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            try database.execute("CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB, n INTEGER)")
            let insert = try database.makeStatement("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)")
            try insert.bind(Int64.min, at: 1)
            try insert.bind(2.5, at: 2)
            try insert.bind("Grüße \u{0}✓", at: 3)
            try insert.bind(bytes: [0, 1, 255], at: 4)
            try insert.bind(nil as Int64?, at: 5)
            try insert.execute()
            try insert.bind(Int(7), at: 1)
            try insert.bind(0.0, at: 2)
            try insert.bind("", at: 3)
            try insert.bind(bytes: [], at: 4)
            try insert.bindNull(at: 5)
            try insert.execute()

            var rows: [(Int64, Double, String, [UInt8], Bool)] = []
            try database.makeStatement("SELECT i, d, s, b, n FROM t ORDER BY rowid").forEachRow { row in
                rows.append((row.int64(at: 0), row.double(at: 1), row.string(at: 2), row.bytes(at: 3), row.isNull(at: 4)))
            }
            #expect(rows.count == 2)
            #expect(rows[0].0 == Int64.min && rows[0].1 == 2.5 && rows[0].2 == "Grüße \u{0}✓" && rows[0].3 == [0, 1, 255] && rows[0].4)
            // An empty string is text, not NULL.
            #expect(rows[1].0 == 7 && rows[1].2 == "" && rows[1].3 == [] && rows[1].4)
            #expect(try database.makeStatement("SELECT count(*) FROM t WHERE s IS NOT NULL").singleInt64() == 2)
        }
    }

    @Test("a blob bound without a copy is stored as it was when the statement ran, and cleared bindings are NULL")
    func borrowedBlob() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            try database.execute("CREATE TABLE t (b BLOB)")
            let insert = try database.makeStatement("INSERT INTO t VALUES (?1)")
            var buffer: [UInt8] = [1, 2, 3]
            try buffer.withUnsafeBytes { bytes in
                try insert.bind(borrowing: bytes, at: 1)
                try insert.execute()
            }
            buffer = [9, 9]
            try buffer.withUnsafeBytes { bytes in
                try insert.bind(borrowing: bytes, at: 1)
                try insert.execute()
            }
            insert.clearBindings()
            try insert.execute()
            var rows: [[UInt8]?] = []
            try database.makeStatement("SELECT b FROM t ORDER BY rowid").forEachRow { row in
                rows.append(row.isNull(at: 0) ? nil : row.bytes(at: 0))
            }
            #expect(rows == [[1, 2, 3], [9, 9], nil])
        }
    }

    @Test("step reports rows and the end, and a reset statement runs again")
    func stepping() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/db.sqlite")
            let statement = try database.makeStatement("SELECT value FROM (SELECT 1 AS value UNION ALL SELECT 2) ORDER BY value")
            #expect(try statement.step())
            #expect(statement.int(at: 0) == 1)
            #expect(try statement.step())
            #expect(try !statement.step())
            statement.reset()
            #expect(try statement.step())
            #expect(statement.optionalInt64(at: 0) == 1)
            #expect(statement.columnCount == 1)
        }
    }
}
