import CounterpointCore
import PostgresDB

/// The PostgreSQL dialect's bulk load: how `CounterRows` are added to a table, by every
/// counter write of the backend (flushes, batch hours, rollups).
///
/// PostgreSQL cannot merge two blobs itself (that would need a server-side function or
/// extension, which managed and distributed engines do not all allow), so the merge happens
/// here, under row locks, and is exact with concurrent writers in READ COMMITTED:
///
/// 1. `INSERT … ON CONFLICT DO NOTHING` gives keys new to the table their row in one statement;
///    a concurrent writer's uncommitted row of the same key makes it wait, then conflict.
/// 2. For the keys that conflicted, a join of their keys (`unnest … WITH ORDINALITY`, probing the
///    primary key in the rows' order, which is key order) `FOR UPDATE` locks their rows (in key
///    order, as every writer does, so two writers cannot deadlock on them) and reads their
///    latest committed blobs; the merged blobs go back in one `UPDATE … FROM unnest(…)`.
/// 3. A key whose row vanished in between (compaction of a covered hour) goes round again.
///
/// Both blobs — dimension counts and listener sketches (`BlobMerge`) — go this way, together;
/// a rebuild of rollup sketches (`CounterRows.replacesListeners`) replaces the stored sketch
/// instead of uniting with it. The realtime table, whose keys mostly exist already (a flush
/// adds to the counters of tracks playing now), starts at step 2 and inserts only the keys it
/// found no row for, which then go round the same way. Rows without blobs skip all this: their
/// plays and listener plays go in one `INSERT … ON CONFLICT DO UPDATE SET plays = plays +
/// excluded.plays, …`, added up by the server.
///
/// Statements take the rows as array parameters (`unnest`) in chunks of at most `chunkRows`.
///
/// A batch writer (`soleWriter`: it holds the batch writer lock, so no other transaction adds
/// or removes rows of the batch tables until it ends) knows which keys are new once it has
/// looked, and writes those by binary `COPY`, straight into the table in one stream, with no
/// conflict to check: when one probe of the table's bucket index finds no row in the buckets
/// (hours, days, months) its rows fall in — a first run over new hours, the hours a rerun has
/// just deleted, the rollups of new days — all of them; otherwise the keys step 2 finds no row
/// for, after it has merged the others (docs/postgresql.md has the measurements). Should
/// another writer add a row of the same key meanwhile after all, the COPY fails on the primary
/// key and the transaction rolls back: never a wrong count.
struct PostgresCounterWrite {
    let counters: CounterRows
    let db: PostgresConnection
    /// True when no other transaction writes this table until this one ends (see above).
    var soleWriter = false

    private var table: CounterTable { counters.table }
    private var firstKeys: [Int64] { counters.firstKeys }
    private var secondKeys: [Int64] { counters.secondKeys }
    private var counts: SignalColumns { counters.counts }
    private var listenerPlays: [Int64] { counters.listenerPlays }

    /// Adds the rows to their table (see the type's comment), inside the caller's transaction.
    func write(chunkRows: Int) throws {
        if soleWriter, table.level != nil { return try writeAlone(chunkRows: chunkRows) }
        let count = counters.count
        var start = 0
        while start < count {
            let end = min(count, start + max(1, chunkRows))
            // Rows without blobs only add counts: one upsert the server adds up itself (and rows
            // with nothing add nothing).
            let plain = (start..<end).filter { !counters.hasBlob($0) && (!counts[$0].isZero || listenerPlays[$0] != 0) }
            if !plain.isEmpty { try addCounts(plain, db) }
            var pending = (start..<end).filter { counters.hasBlob($0) }
            // Each step hands the other the rows it could not write: the insert its conflicts,
            // the merge the keys it found no row for (new, or compacted meanwhile).
            var inserting = table.level != nil
            while !pending.isEmpty {
                pending = inserting ? try insertNew(pending, db) : try mergeExisting(pending, db)
                inserting.toggle()
            }
            start = end
        }
    }

    /// The sole writer's way (see the type's comment): the rows with something to write are
    /// merged into the rows their keys have, if the buckets hold any, and the rest copied in.
    private func writeAlone(chunkRows: Int) throws {
        var new = counters.indices.filter { counters.hasContent($0) }
        if try !bucketsAreEmpty() {
            let rows = new
            new = try stride(from: 0, to: rows.count, by: max(1, chunkRows)).flatMap { start in
                try mergeExisting(Array(rows[start..<min(rows.count, start + max(1, chunkRows))]), db)
            }
        }
        try copyInto(new)
    }

    /// Whether the table holds no row in the buckets (hours, days or months) of the rows: then
    /// every row's key is new to it. A batch table's ranked index leads with the bucket.
    private func bucketsAreEmpty() throws -> Bool {
        guard let lowest = secondKeys.min(), let highest = secondKeys.max() else { return true }
        let bucket = table.keys.second
        return try db.query("SELECT NOT EXISTS (SELECT 1 FROM \(table.name) WHERE \(bucket) >= $1 AND \(bucket) <= $2)",
                            [lowest, highest]).string(row: 0, column: 0) == "t"
    }

    /// Copies `rows` into the table, whose keys they must all be new to; an empty blob goes in
    /// as NULL.
    private func copyInto(_ rows: [Int]) throws {
        guard !rows.isEmpty else { return }
        let (first, second) = table.keys
        // Rows of plays alone leave the other signals' columns to their default, 0.
        let signals = counts.hasOtherSignals ? Signal.allCases : [.plays]
        let values = (signals.map(\.rawValue) + ["dimensions", "listener_plays", "listeners"]).joined(separator: ", ")
        let sql = "COPY \(table.name) (\(first), \(second), \(values)) FROM STDIN (FORMAT binary)"
        try counters.dimensions.withBlobs { dimensions in
            try counters.listeners.withBlobs { listeners in
                _ = try db.copyIn(sql) { copy in
                    for row in rows {
                        try copy.startRow(fields: 5 + signals.count)
                        copy.append(bigint: firstKeys[row])
                        copy.append(bigint: secondKeys[row])
                        if signals.count == 1 {
                            copy.append(bigint: counts.plays(of: row))
                        } else {
                            let rowCounts = counts[row]
                            for signal in signals { copy.append(bigint: rowCounts[signal]) }
                        }
                        copy.append(bytea: Self.nullIfEmpty(dimensions(row)))
                        copy.append(bigint: listenerPlays[row])
                        copy.append(bytea: Self.nullIfEmpty(listeners(row)))
                    }
                }
            }
        }
    }

    private static func nullIfEmpty(_ blob: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? { blob.isEmpty ? nil : blob }

    /// Adds the counts and listener plays of `rows` (which have no blobs), inserting the keys the
    /// table lacks; their blobs, if any, stay as they are.
    private func addCounts(_ rows: [Int], _ db: PostgresConnection) throws {
        var parameters = keyArrays(rows) + signalArrays(rows)
        parameters.append(PostgresInt64Array(rows.map { listenerPlays[$0] }))
        try db.query(sql.addCounts, parameters)
    }

    /// Inserts the rows of keys the table lacks; returns the others (in key order).
    private func insertNew(_ rows: [Int], _ db: PostgresConnection) throws -> [Int] {
        var parameters = keyArrays(rows) + signalArrays(rows)
        parameters.append(try blobArray(rows) { row, body in
            try counters.dimensions.withBlobs { try body($0(row)) }
        })
        parameters.append(PostgresInt64Array(rows.map { listenerPlays[$0] }))
        parameters.append(try blobArray(rows) { row, body in
            try counters.listeners.withBlobs { try body($0(row)) }
        })
        // The ordinals of the rows not inserted: a data-modifying CTE's RETURNING anti-joined
        // with the input, so that only conflicts travel back (none in a fresh batch run), not
        // every inserted key.
        let result = try db.query(sql.insert, parameters)
        return (0..<result.rowCount).map { rows[Int(result.int64(row: $0, column: 0)) - 1] }
    }

    /// Locks and merges the rows of `rows`' keys (`rows` in key order); returns the rows whose
    /// key has no row (any more). The sole writer reads without locking: nobody else writes.
    private func mergeExisting(_ rows: [Int], _ db: PostgresConnection) throws -> [Int] {
        guard !rows.isEmpty else { return [] }
        // (ordinal in `rows` from 1, dimensions, listeners) of the keys found, by ordinal.
        let stored = try db.query(soleWriter ? sql.read : sql.lock, keyArrays(rows))
        var merged: [(row: Int, dimensions: [UInt8], listeners: [UInt8])] = []
        var missing: [Int] = []
        var scratch: [UInt8] = []
        var next = 0
        for (position, row) in rows.enumerated() {
            guard next < stored.rowCount, stored.int64(row: next, column: 0) == Int64(position + 1) else {
                missing.append(row)
                continue
            }
            let dimensionsOK = stored.withBytes(row: next, column: 1) { old in
                counters.dimensions.withBlobs { BlobMerge.merge(.dimensions, old, $0(row), into: &scratch) }
            }
            guard dimensionsOK else { throw CounterStoreError.malformedDimensions(counters.subject(row)) }
            let dimensions = scratch
            let listenersOK = stored.withBytes(row: next, column: 2) { old in
                counters.listeners.withBlobs { sketch in
                    counters.replacesListeners
                        ? BlobMerge.merge(.listeners, CounterRows.noBlob, sketch(row), into: &scratch)
                        : BlobMerge.merge(.listeners, old, sketch(row), into: &scratch)
                }
            }
            guard listenersOK else { throw CounterStoreError.malformedListeners(counters.subject(row)) }
            merged.append((row, dimensions, scratch))
            next += 1
        }
        if !merged.isEmpty {
            var parameters = keyArrays(merged.map(\.row)) + signalArrays(merged.map(\.row))
            parameters.append(try blobArray(merged.indices) { index, body in try merged[index].dimensions.withUnsafeBytes(body) })
            parameters.append(PostgresInt64Array(merged.map { listenerPlays[$0.row] }))
            parameters.append(try blobArray(merged.indices) { index, body in try merged[index].listeners.withUnsafeBytes(body) })
            try db.query(sql.update, parameters)
        }
        return missing
    }

    private func keyArrays(_ rows: [Int]) -> [any PostgresParameter] {
        [PostgresInt64Array(rows.map { firstKeys[$0] }), PostgresInt64Array(rows.map { secondKeys[$0] })]
    }

    /// One array per signal (`Catalogue.signalColumns`' order).
    private func signalArrays(_ rows: [Int]) -> [any PostgresParameter] {
        Signal.allCases.map { signal in PostgresInt64Array(rows.map { counts[$0][signal] }) }
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

    /// The statements of a table.
    struct Statements {
        var addCounts: String
        var insert: String
        var lock: String
        /// `lock` without the locks, for the sole writer.
        var read: String
        var update: String

        /// The columns after the keys, in the order every statement and the COPY take them.
        static let valueColumns = (Catalogue.signalColumns + ["dimensions", "listener_plays", "listeners"]).joined(separator: ", ")

        static func of(_ table: CounterTable) -> Statements {
            let (first, second) = table.keys
            let signals = Catalogue.signalColumns
            // $3… one bigint[] per signal, then dimensions, listener plays and listeners.
            let signalTypes = signals.indices.map { "$\($0 + 3)::bigint[]" }
            let next = 3 + signals.count
            let valueTypes = (signalTypes + ["$\(next)::bytea[]", "$\(next + 1)::bigint[]", "$\(next + 2)::bytea[]"]).joined(separator: ", ")
            let valueColumns = Self.valueColumns
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
            // The ordinals come out in order without a sort (measured 0.7 s for 236 k keys of
            // batch_days, against 2.3 s for `WHERE (…) IN (SELECT * FROM unnest(…)) ORDER BY key`).
            let read = """
                SELECT u.ordinal, t.dimensions, t.listeners
                FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS u (\(first), \(second), ordinal)
                JOIN \(table.name) AS t USING (\(first), \(second)) ORDER BY u.ordinal
                """
            let lock = read + " FOR UPDATE OF t"
            let sums = (signals + ["listener_plays"]).map { "\($0) = t.\($0) + u.\($0)" }.joined(separator: ", ")
            let update = """
                UPDATE \(table.name) AS t SET dimensions = u.dimensions, listeners = u.listeners, \(sums)
                FROM unnest($1::bigint[], $2::bigint[], \(valueTypes)) AS u (\(first), \(second), \(valueColumns))
                WHERE t.\(first) = u.\(first) AND t.\(second) = u.\(second)
                """
            let added = signals + ["listener_plays"]
            let addCounts = """
                INSERT INTO \(table.name) AS t (\(first), \(second), \(added.joined(separator: ", ")))
                SELECT * FROM unnest($1::bigint[], $2::bigint[], \((signalTypes + ["$\(next)::bigint[]"]).joined(separator: ", ")))
                ON CONFLICT (\(first), \(second)) DO UPDATE SET \(added.map { "\($0) = t.\($0) + excluded.\($0)" }.joined(separator: ", "))
                """
            return Statements(addCounts: addCounts, insert: insert, lock: lock, read: read, update: update)
        }
    }
}
