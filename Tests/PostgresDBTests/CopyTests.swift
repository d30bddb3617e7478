import Patience
import PostgresDB
import PostgresTestServer
import Testing

@Suite("PostgreSQL binary COPY", .onTestThreads)
struct CopyTests {
    /// A row as the test writes it: bytea nil is NULL, an empty one is an empty value.
    struct Row: Equatable {
        var key: Int64
        var value: Int64
        var blob: [UInt8]?
    }

    static func copy(_ rows: [Row], into table: String, _ db: PostgresConnection) throws -> Int {
        try db.copyIn("COPY \(table) (key, value, blob) FROM STDIN (FORMAT binary)") { copy in
            for row in rows {
                try copy.startRow(fields: 3)
                copy.append(bigint: row.key)
                copy.append(bigint: row.value)
                if let blob = row.blob { blob.withUnsafeBytes { copy.append(bytea: $0) } } else { copy.appendNull() }
            }
        }
    }

    static func stored(_ table: String, _ db: PostgresConnection) throws -> [Row] {
        let result = try db.query("SELECT key, value, blob IS NULL, encode(blob, 'hex') FROM \(table) ORDER BY key")
        return (0..<result.rowCount).map { row in
            let hex = Array(result.string(row: row, column: 3).utf8)
            let bytes = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
            return Row(key: result.int64(row: row, column: 0), value: result.int64(row: row, column: 1),
                       blob: result.string(row: row, column: 2) == "t" ? nil : bytes)
        }
    }

    @Test("rows go in as written — bigint extremes, NULL, empty and megabyte bytea values, across many send buffers — and the count comes back")
    func roundTrip() throws {
        let db = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        try db.execute("CREATE TABLE t (key bigint PRIMARY KEY, value bigint, blob bytea)")
        var rows = [Row(key: .min, value: .max, blob: nil), Row(key: -1, value: 0, blob: []),
                    Row(key: 0, value: -1, blob: (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 * 7) }),
                    Row(key: .max, value: .min, blob: [0, 255, 0])]
        // Enough small rows that the stream is sent in several buffers, not one.
        for key in 1...60_000 {
            let blob: [UInt8]? = key % 3 == 0 ? nil : Array("row \(key)".utf8)
            rows.append(Row(key: Int64(key), value: Int64(key) * 3, blob: blob))
        }
        let count = try db.write { try Self.copy(rows, into: "t", $0) }
        #expect(count == rows.count)
        #expect(try Self.stored("t", db) == rows.sorted { $0.key < $1.key })
    }

    @Test("a row the server refuses fails the COPY with its SQLSTATE and message, the transaction rolls back, and the connection stays usable")
    func refusedRow() throws {
        let db = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        try db.execute("CREATE TABLE t (key bigint PRIMARY KEY, value bigint, blob bytea)")
        let error = try #require(throws: PostgresError.self) {
            try db.write { db in
                try db.query("INSERT INTO t (key, value) VALUES ($1, $2)", [Int64(7), Int64(1)])
                _ = try Self.copy([Row(key: 1, value: 1, blob: nil), Row(key: 7, value: 2, blob: [1])], into: "t", db)
            }
        }
        #expect(error.sqlState == "23505")
        #expect(error.kind == .constraint)
        #expect(error.message.contains("t_pkey"))
        #expect(error.operation.hasPrefix("COPY t"))
        #expect(!error.description.contains("\n"))
        #expect(!db.inTransaction)
        #expect(try Self.stored("t", db).isEmpty)
        // The same connection copies again at once.
        #expect(try db.write { try Self.copy([Row(key: 7, value: 3, blob: [2])], into: "t", $0) } == 1)
        #expect(try Self.stored("t", db) == [Row(key: 7, value: 3, blob: [2])])
    }

    @Test("a COPY whose rows throw is cancelled: the writer's error comes back and nothing of it is kept")
    func cancelled() throws {
        let db = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        try db.execute("CREATE TABLE t (key bigint PRIMARY KEY, value bigint, blob bytea)")
        struct Malformed: Error {}
        #expect(throws: Malformed.self) {
            try db.write { db in
                _ = try db.copyIn("COPY t (key, value, blob) FROM STDIN (FORMAT binary)") { copy in
                    for key in 1...100_000 {
                        if key == 90_000 { throw Malformed() }
                        try copy.startRow(fields: 3)
                        copy.append(bigint: Int64(key))
                        copy.append(bigint: 0)
                        copy.appendNull()
                    }
                }
            }
        }
        #expect(try db.query("SELECT count(*) FROM t").singleInt64 == 0)
        #expect(try db.write { try Self.copy([Row(key: 1, value: 1, blob: nil)], into: "t", $0) } == 1)
    }

    @Test("a COPY statement the server rejects fails before any row is sent")
    func rejectedStatement() throws {
        let db = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        var rowsWritten = 0
        let error = try #require(throws: PostgresError.self) {
            try db.copyIn("COPY missing_table (key) FROM STDIN (FORMAT binary)") { _ in rowsWritten += 1 }
        }
        #expect(error.sqlState == "42P01")
        #expect(rowsWritten == 0)
        #expect(try db.query("SELECT 7").singleInt64 == 7)
    }
}
