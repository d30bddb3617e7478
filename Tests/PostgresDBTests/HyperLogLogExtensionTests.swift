import CounterpointCore
import Generator
import Patience
import PostgresDB
import PostgresTestServer
import Testing

/// The listener sketch against the real `hll` extension (Debian's postgresql-15-hll) in the
/// tests' PostgreSQL server: the same listener ids give the same hashes and the same bytes, the
/// extension reads our bytes to the same estimate, and unions agree.
@Suite("HyperLogLog sketches are byte-for-byte those of postgresql-hll", .onTestThreads)
struct HyperLogLogExtensionTests {
    static func connection() throws -> PostgresConnection {
        let connection = try PostgresConnection(url: PostgresTestServer.shared().makeDatabase())
        try connection.execute("CREATE EXTENSION IF NOT EXISTS hll")
        return connection
    }

    /// Distinct listener ids, seeded: small ids, ids up to 2^53 and the extremes.
    static func listenerIDs(_ count: Int, seed: UInt64) -> [Int64] {
        var random = SeededRandom(seed: seed)
        var ids = Set<Int64>([0, 1, Int64.max].prefix(min(count, 3)))
        while ids.count < count {
            ids.insert(random.next(below: 2) == 0 ? Int64(random.next(below: 1_000_000)) : Int64(random.next() >> 11))
        }
        return Array(ids)
    }

    /// An `hll` expression as `bytea`: the extension has no cast, but its text form is bytea's
    /// hex form (`\x…`).
    static func asBytea(_ hll: String) -> String { "decode(substr((\(hll))::text, 3), 'hex')" }

    /// The extension's sketch of these ids, as bytes.
    static func extensionSketch(_ ids: [Int64], _ connection: PostgresConnection) throws -> [UInt8] {
        let result = try connection.query(
            "SELECT \(asBytea("hll_add_agg(hll_hash_bigint(id, 0), 12, 5, -1, 1)")) FROM unnest($1::bigint[]) AS t (id)",
            [PostgresInt64Array(ids)])
        return result.bytes(row: 0, column: 0)
    }

    @Test("hll_hash_bigint(id, 0) is MurmurHash3's first 64 bits of the id's eight bytes")
    func hashes() throws {
        let connection = try Self.connection()
        let ids = Self.listenerIDs(2_000, seed: 3) + [-1, Int64.min, 42]
        let result = try connection.query(
            "SELECT hll_hash_bigint(id, 0)::text::bigint FROM unnest($1::bigint[]) WITH ORDINALITY AS t (id, n) ORDER BY n",
            [PostgresInt64Array(ids)])
        for (row, id) in ids.enumerated() {
            #expect(result.int64(row: row, column: 0) == MurmurHash3.hashBigint(id), "listener \(id)")
        }
    }

    @Test("the extension writes the same bytes for the same listeners, in every representation, and reads ours to the same estimate",
          arguments: [1, 2, 50, 320, 321, 800, 1_500, 3_000, 20_000, 150_000])
    func sameBytesAndEstimates(count: Int) throws {
        let connection = try Self.connection()
        for seed in 0..<3 as Range<UInt64> {
            let ids = Self.listenerIDs(count, seed: seed * 7 + UInt64(count))
            let ours = HyperLogLog(listenerIDs: ids)
            #expect(try Self.extensionSketch(ids, connection) == ours.encoded, "\(count) listeners, seed \(seed): \(ours.representation)")
            let estimate = try connection.query("SELECT hll_cardinality($1::bytea::hll)::text", [PostgresBytea(ours.encoded)])
            #expect(Double(estimate.string(row: 0, column: 0)) == ours.cardinality, "\(count) listeners, seed \(seed)")
        }
    }

    @Test("hll_union of our bytes is the bytes of our union, for every pair of representations")
    func unions() throws {
        let connection = try Self.connection()
        let sets = [0, 100, 300, 900, 30_000].enumerated().map { Self.listenerIDs($0.element, seed: 500 + UInt64($0.offset)) }
        for first in sets {
            for second in sets {
                let a = HyperLogLog(listenerIDs: first), b = HyperLogLog(listenerIDs: second + first.prefix(10))
                let result = try connection.query("SELECT \(Self.asBytea("hll_union($1::bytea::hll, $2::bytea::hll)"))",
                                                  [PostgresBytea(a.encoded), PostgresBytea(b.encoded)])
                #expect(result.bytes(row: 0, column: 0) == (try a.union(b)).encoded,
                        "\(a.representation) ∪ \(b.representation)")
            }
        }
    }
}
