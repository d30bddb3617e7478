import Patience
import PostgresDB
import PostgresTestServer
import Testing

@Suite("PostgreSQL bytea parameters and results", .onTestThreads)
struct ByteaTests {
    /// Blobs that exercise the text formats: empty, the bytes the array literal and the hex
    /// format quote or escape (0x00, `\`, `"`, `,`, `{`, `}`), every byte value, and random ones.
    static func blobs() -> [[UInt8]] {
        var random = SystemRandomNumberGenerator()
        var blobs: [[UInt8]] = [[], [0x00], [0x5C], [0x22], [0x5C, 0x5C, 0x22, 0x00, 0x2C, 0x7B, 0x7D, 0x20],
                                Array(0...255), Array((0...255).reversed())]
        for _ in 0..<200 {
            blobs.append((0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        return blobs
    }

    @Test("a bytea[] parameter round-trips any bytes through unnest, empty elements and NULLs included, in binary and as its text literal")
    func arrayRoundTrip() throws {
        let connection = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        let blobs = Self.blobs()
        var array = PostgresByteaArray()
        for blob in blobs { blob.withUnsafeBytes { array.append($0) } }
        array.appendNull()
        #expect(array.count == blobs.count + 1)
        let result = try connection.query("""
            SELECT i, b, b IS NULL, length(b) FROM unnest($1::bytea[]) WITH ORDINALITY AS t (b, i) ORDER BY i
            """, [array])
        #expect(result.rowCount == blobs.count + 1)
        for (index, blob) in blobs.enumerated() {
            #expect(result.bytes(row: index, column: 1) == blob, "blob \(index)")
            #expect(result.int64(row: index, column: 3) == Int64(blob.count), "length of blob \(index) as the server sees it")
        }
        #expect(result.string(row: blobs.count, column: 2) == "t")
        #expect(result.bytes(row: blobs.count, column: 1) == [])
        // The [[UInt8]] initializer writes the same literal.
        let again = try connection.query("SELECT b FROM unnest($1::bytea[]) WITH ORDINALITY AS t (b, i) ORDER BY i",
                                          [PostgresByteaArray(blobs)])
        #expect((0..<again.rowCount).map { again.bytes(row: $0, column: 0) } == blobs)
        // The array goes in binary; its text literal, parsed by the server, is the same array.
        let literal = try #require(array.postgresText)
        #expect(try connection.query("SELECT $1::text::bytea[] IS NOT DISTINCT FROM $2::bytea[]", [literal, array])
            .string(row: 0, column: 0) == "t")
        #expect(try connection.query("SELECT cardinality($1::bytea[])", [PostgresByteaArray()]).singleInt64 == 0)
    }

    @Test("a single bytea parameter is stored and read back as the same bytes, also in the escape output format")
    func singleRoundTrip() throws {
        let connection = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        try connection.execute("CREATE TABLE blobs (id bigint PRIMARY KEY, b bytea)")
        let blobs = Self.blobs()
        for (index, blob) in blobs.enumerated() {
            try connection.query("INSERT INTO blobs (id, b) VALUES ($1, $2::bytea)", [Int64(index), PostgresBytea(blob)])
        }
        // The server computes a digest of what it stored: the bytes arrived unchanged.
        for (index, blob) in blobs.enumerated().prefix(20) {
            let hex = try connection.query("SELECT encode(b, 'hex') FROM blobs WHERE id = $1", [Int64(index)]).string(row: 0, column: 0)
            #expect(hex == blob.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined())
        }
        for format in ["hex", "escape"] {
            try connection.execute("SET bytea_output = \(format)")
            let result = try connection.query("SELECT b FROM blobs ORDER BY id")
            #expect((0..<result.rowCount).map { result.bytes(row: $0, column: 0) } == blobs, "bytea_output = \(format)")
            var total = 0
            for row in 0..<result.rowCount { result.withBytes(row: row, column: 0) { total += $0.count } }
            #expect(total == blobs.reduce(0) { $0 + $1.count })
        }
        #expect(try connection.query("SELECT NULL::bytea").bytes(row: 0, column: 0) == [])
    }
}
