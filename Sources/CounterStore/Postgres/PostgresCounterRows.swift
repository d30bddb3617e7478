import CounterpointCore
import PostgresDB

/// Keyed rows carrying plays and dimension counts (`DimensionEncoding` blobs) — summed and
/// merged per key as they are appended in key order — and the one way they are added to a
/// PostgreSQL table, by every counter write of the backend (flushes, batch hours, rollups).
///
/// PostgreSQL cannot merge two blobs itself (that would need a server-side function or
/// extension, which managed and distributed engines do not all allow), so the merge happens
/// here, under row locks, and is exact with concurrent writers in READ COMMITTED:
///
/// 1. `INSERT … ON CONFLICT DO NOTHING` gives keys new to the table their row in one statement;
///    a concurrent writer's uncommitted row of the same key makes it wait, then conflict.
/// 2. For the keys that conflicted, `SELECT … ORDER BY key FOR UPDATE` locks their rows (in key
///    order, as every writer does, so two writers cannot deadlock on them) and reads their
///    latest committed blobs; the merged blobs go back in one `UPDATE … FROM unnest(…)`.
/// 3. A key whose row vanished in between (compaction of a covered hour) goes round again.
///
/// Tables whose keys mostly exist already (`Table.mostlyExisting`) start at step 2 and insert
/// only the keys it found no row for, which then go round the same way. Rows without dimension
/// counts skip all this: their plays go in one `INSERT … ON CONFLICT DO UPDATE SET plays =
/// plays + excluded.plays`, added up by the server.
///
/// Statements take the rows as array parameters (`unnest`) in chunks of at most `chunkRows`.
struct PostgresCounterRows {
    /// A table whose rows hold a `dimensions` bytea, keyed by two bigint columns.
    struct Table {
        var name: String
        var keys: (String, String)
        /// Which of the two keys is the track id (for errors).
        var trackKey: Int

        /// Most keys written already have a row (a flush adds to the counters of tracks playing
        /// now; rollup rows exist once their plays are rolled up): the merge of existing rows
        /// goes first, and only the keys it did not find are inserted. Otherwise (a batch run's
        /// fresh hours) the insert goes first and only its conflicts are merged.
        var mostlyExisting: Bool

        static let realtime = Table(name: "realtime_counts", keys: ("hour", "track_id"), trackKey: 1, mostlyExisting: true)
        static let batchHours = Table(name: "batch_hours", keys: ("track_id", "hour"), trackKey: 0, mostlyExisting: false)
        static let batchDays = Table(name: "batch_days", keys: ("track_id", "day"), trackKey: 0, mostlyExisting: true)
        static let batchMonths = Table(name: "batch_months", keys: ("track_id", "month"), trackKey: 0, mostlyExisting: true)
    }

    let table: Table
    private(set) var firstKeys: [Int64] = []
    private(set) var secondKeys: [Int64] = []
    private(set) var plays: [Int64] = []
    /// The rows' blobs, back to back: one buffer instead of an array per row.
    private var arena: [UInt8] = []
    private var blobs: [Range<Int>] = []
    private var scratch: [UInt8] = []

    init(_ table: Table) { self.table = table }

    var count: Int { firstKeys.count }
    var isEmpty: Bool { firstKeys.isEmpty }

    mutating func reserveCapacity(_ rows: Int) {
        firstKeys.reserveCapacity(rows)
        secondKeys.reserveCapacity(rows)
        plays.reserveCapacity(rows)
        blobs.reserveCapacity(rows)
    }

    /// Adds a row; rows must come in ascending key order. A row of the last row's key adds its
    /// plays to it and merges its blob into it. Throws `malformedDimensions` for a blob
    /// `DimensionEncoding` cannot read.
    mutating func append(_ first: Int64, _ second: Int64, plays rowPlays: Int64 = 0, dimensions: UnsafeRawBufferPointer) throws {
        if let last = firstKeys.indices.last, firstKeys[last] == first, secondKeys[last] == second {
            plays[last] += rowPlays
            guard !dimensions.isEmpty else { return }
            let range = blobs[last]
            let ok = arena.withUnsafeBytes { arena in
                DimensionEncoding.merge(UnsafeRawBufferPointer(rebasing: arena[range]), dimensions, into: &scratch)
            }
            guard ok else { throw malformed(first, second) }
            // The last row's blob is the arena's tail: replace it.
            arena.removeSubrange(range.lowerBound...)
            arena.append(contentsOf: scratch)
            blobs[last] = range.lowerBound..<arena.count
        } else {
            precondition(firstKeys.last.map { ($0, secondKeys.last!) < (first, second) } ?? true,
                         "PostgresCounterRows: rows out of key order")
            firstKeys.append(first)
            secondKeys.append(second)
            plays.append(rowPlays)
            arena.append(contentsOf: dimensions)
            blobs.append(arena.count - dimensions.count..<arena.count)
        }
    }

    mutating func removeAll() {
        firstKeys.removeAll(keepingCapacity: true)
        secondKeys.removeAll(keepingCapacity: true)
        plays.removeAll(keepingCapacity: true)
        arena.removeAll(keepingCapacity: true)
        blobs.removeAll(keepingCapacity: true)
    }

    private func malformed(_ first: Int64, _ second: Int64) -> CounterStoreError {
        .malformedDimensions(trackID: table.trackKey == 0 ? first : second)
    }

    // MARK: Writing

    /// Merges the rows into `table` (see the type's comment), inside the caller's transaction.
    mutating func write(on db: PostgresConnection, chunkRows: Int = 200_000) throws {
        var start = 0
        while start < count {
            let end = min(count, start + max(1, chunkRows))
            // Rows without dimension counts only add plays: one upsert the server adds up itself
            // (and rows with neither add nothing).
            let plain = (start..<end).filter { blobs[$0].isEmpty && plays[$0] != 0 }
            if !plain.isEmpty { try addPlays(plain, db) }
            var pending = (start..<end).filter { !blobs[$0].isEmpty }
            // Each step hands the other the rows it could not write: the insert its conflicts,
            // the merge the keys it found no row for (new, or compacted meanwhile).
            var inserting = !table.mostlyExisting
            while !pending.isEmpty {
                pending = inserting ? try insertNew(pending, db) : try mergeExisting(pending, db)
                inserting.toggle()
            }
            start = end
        }
    }

    /// Adds the plays of `rows` (which have no dimension counts), inserting the keys the table
    /// lacks; their blobs, if any, stay as they are.
    private func addPlays(_ rows: [Int], _ db: PostgresConnection) throws {
        var parameters = keyArrays(rows)
        parameters.append(PostgresInt64Array(rows.map { plays[$0] }))
        try db.query(sql.addPlays, parameters)
    }

    /// Inserts the rows of keys the table lacks; returns the others (in key order).
    private func insertNew(_ rows: [Int], _ db: PostgresConnection) throws -> [Int] {
        var parameters = keyArrays(rows)
        parameters.append(PostgresInt64Array(rows.map { plays[$0] }))
        parameters.append(try blobArray(rows) { row, body in
            try arena.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[blobs[row]])) }
        })
        // The ordinals of the rows not inserted: a data-modifying CTE's RETURNING anti-joined
        // with the input, so that only conflicts travel back (none in a fresh batch run), not
        // every inserted key.
        let result = try db.query(sql.insert, parameters)
        return (0..<result.rowCount).map { rows[Int(result.int64(row: $0, column: 0)) - 1] }
    }

    /// Locks and merges the rows of `rows`' keys; returns the rows whose key has no row any more.
    private func mergeExisting(_ rows: [Int], _ db: PostgresConnection) throws -> [Int] {
        guard !rows.isEmpty else { return [] }
        let stored = try db.query(sql.lock, keyArrays(rows))
        var merged: [(row: Int, blob: [UInt8])] = []
        var missing: [Int] = []
        var scratch: [UInt8] = []
        var next = 0
        for row in rows {
            while next < stored.rowCount, (stored.int64(row: next, column: 0), stored.int64(row: next, column: 1)) < (firstKeys[row], secondKeys[row]) {
                next += 1
            }
            guard next < stored.rowCount, stored.int64(row: next, column: 0) == firstKeys[row],
                  stored.int64(row: next, column: 1) == secondKeys[row] else {
                missing.append(row)
                continue
            }
            let ok = stored.withBytes(row: next, column: 2) { old in
                arena.withUnsafeBytes { DimensionEncoding.merge(old, UnsafeRawBufferPointer(rebasing: $0[blobs[row]]), into: &scratch) }
            }
            guard ok else { throw malformed(firstKeys[row], secondKeys[row]) }
            merged.append((row, scratch))
        }
        if !merged.isEmpty {
            var parameters = keyArrays(merged.map(\.row))
            parameters.append(PostgresInt64Array(merged.map { plays[$0.row] }))
            parameters.append(try blobArray(merged.indices) { index, body in try merged[index].blob.withUnsafeBytes(body) })
            try db.query(sql.update, parameters)
        }
        return missing
    }

    private func keyArrays(_ rows: [Int]) -> [any PostgresParameter] {
        [PostgresInt64Array(rows.map { firstKeys[$0] }), PostgresInt64Array(rows.map { secondKeys[$0] })]
    }

    /// The blobs of `rows` as one `bytea[]`; an empty blob is NULL where the table allows it.
    private func blobArray<Rows: Sequence>(_ rows: Rows, _ blob: (Rows.Element, (UnsafeRawBufferPointer) throws -> Void) throws -> Void) rethrows -> PostgresByteaArray {
        var array = PostgresByteaArray()
        for row in rows {
            try blob(row) { bytes in
                if bytes.isEmpty { array.appendNull() } else { array.append(bytes) }
            }
        }
        return array
    }

    private var sql: Statements { Statements.of(table) }

    /// The three statements of a table.
    struct Statements {
        var addPlays: String
        var insert: String
        var lock: String
        var update: String

        static func of(_ table: Table) -> Statements {
            let (first, second) = table.keys
            let valueColumns = "plays, dimensions"
            let valueTypes = "$3::bigint[], $4::bytea[]"
            let insert = """
                WITH input AS (
                    SELECT * FROM unnest($1::bigint[], $2::bigint[], \(valueTypes)) WITH ORDINALITY
                    AS u (\(first), \(second), \(valueColumns), ordinal)
                ), inserted AS (
                    INSERT INTO \(table.name) (\(first), \(second), \(valueColumns))
                    SELECT \(first), \(second), \(valueColumns) FROM input
                    ON CONFLICT (\(first), \(second)) DO NOTHING RETURNING \(first), \(second)
                )
                SELECT input.ordinal FROM input LEFT JOIN inserted USING (\(first), \(second))
                WHERE inserted.\(first) IS NULL ORDER BY input.ordinal
                """
            let lock = """
                SELECT \(first), \(second), dimensions FROM \(table.name)
                WHERE (\(first), \(second)) IN (SELECT * FROM unnest($1::bigint[], $2::bigint[]))
                ORDER BY \(first), \(second) FOR UPDATE
                """
            let update = """
                UPDATE \(table.name) AS t SET dimensions = u.dimensions, plays = t.plays + u.plays
                FROM unnest($1::bigint[], $2::bigint[], \(valueTypes)) AS u (\(first), \(second), \(valueColumns))
                WHERE t.\(first) = u.\(first) AND t.\(second) = u.\(second)
                """
            let addPlays = """
                INSERT INTO \(table.name) AS t (\(first), \(second), plays)
                SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[])
                ON CONFLICT (\(first), \(second)) DO UPDATE SET plays = t.plays + excluded.plays
                """
            return Statements(addPlays: addPlays, insert: insert, lock: lock, update: update)
        }
    }
}
