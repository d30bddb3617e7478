import CounterpointCore

/// A counters table of either layer: rows keyed by two bigint columns, holding every signal and
/// the optional payloads (`CounterRows.payloads`), of one kind of subject.
struct CounterTable: Sendable, Hashable {
    var name: String
    /// The key columns, in the primary key's order.
    var keys: (first: String, second: String)
    /// Which key is the subject's id (0 or 1).
    var idKey: Int
    /// The rollup level of a batch table; nil for the realtime table.
    var level: RollupLevel?
    /// Whose rows the table holds.
    var subject: SubjectKind

    /// The subject's id column (`track_id`, `creator_id`).
    var idColumn: String { idKey == 0 ? keys.first : keys.second }
    /// The other key column: the hour, day or month.
    var bucketColumn: String { idKey == 0 ? keys.second : keys.first }

    static func == (a: CounterTable, b: CounterTable) -> Bool { a.name == b.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// The one place the store's tables are named: every statement of both dialects derives the
/// table, key and slot of a rollup level and a subject kind from here (the migrations, being
/// history, spell the tracks' tables out as they were). docs/architecture.md describes the layers.
///
/// Each subject kind has a family of tables of the same shape (docs/creators-and-signals.md): the
/// tracks' are `batch_hours`, `batch_days`, `batch_months` and `realtime_counts`; a creator's
/// the same names prefixed `creator_`, keyed by `creator_id`.
enum Catalogue {
    /// The prefix of a kind's table names.
    static func prefix(_ kind: SubjectKind) -> String { kind == .track ? "" : "\(kind)_" }

    /// The batch tables of each kind, of each rollup level, keyed (id, bucket) for a subject's
    /// sums and timelines; `[kind.rawValue][level.rawValue]`.
    private static let batchFamilies: [[CounterTable]] = SubjectKind.allCases.map { kind in
        zip(RollupLevel.allCases, [("batch_hours", "hour"), ("batch_days", "day"), ("batch_months", "month")]).map { level, table in
            CounterTable(name: prefix(kind) + table.0, keys: (kind.idField, table.1), idKey: 0, level: level, subject: kind)
        }
    }

    /// The batch tables of `kind`, in `RollupLevel` order.
    static func batchTables(_ kind: SubjectKind) -> [CounterTable] { batchFamilies[kind.rawValue] }

    /// The tracks' batch tables (as the migrations made them).
    static var batchTables: [CounterTable] { batchTables(.track) }

    static func batch(_ level: RollupLevel, _ kind: SubjectKind = .track) -> CounterTable {
        batchFamilies[kind.rawValue][level.rawValue]
    }

    /// The realtime counters of each kind, keyed (hour, id) so that compaction deletes contiguous rows.
    private static let realtimeFamily: [CounterTable] = SubjectKind.allCases.map { kind in
        CounterTable(name: prefix(kind) + "realtime_counts", keys: ("hour", kind.idField), idKey: 1, level: nil, subject: kind)
    }

    static func realtime(_ kind: SubjectKind) -> CounterTable { realtimeFamily[kind.rawValue] }

    /// The tracks' realtime table (as the migrations made it).
    static var realtime: CounterTable { realtime(.track) }

    /// The levels of `RollupDecomposition.slots`, in slot order: the statements that sum a
    /// track over a decomposition have one part per slot.
    static let slotLevels: [RollupLevel] = RollupDecomposition(HourRange(Hour(index: 0), Hour(index: 0))).slots.map(\.level)

    /// The slot levels whose bit is set in `mask` (bit i: slot i), in slot order.
    static func slotLevels(mask: Int) -> [RollupLevel] {
        slotLevels.indices.filter { mask & (1 << $0) != 0 }.map { slotLevels[$0] }
    }

    /// The non-empty slots of `part` as a mask and their spans in slot order.
    static func nonEmptySlots(of part: RollupDecomposition) -> (mask: Int, spans: [RollupSpan]) {
        var mask = 0
        var spans: [RollupSpan] = []
        for (index, span) in part.slots.enumerated() where !span.isEmpty {
            mask |= 1 << index
            spans.append(span)
        }
        return (mask, spans)
    }

    /// Statements on the batch tables, in a dialect's placeholders (`placeholder(n)`).
    struct BatchStatements {
        /// `sumBySlots[mask]`: Σ plays of the track (parameter 1) over the slots set in `mask`,
        /// the i-th of them bounded by parameters 2i+2 and 2i+3.
        let sumBySlots: [String]
        /// The expression `sumBySlots[mask]` selects, for statements that select more.
        let sumExpressionBySlots: [String]
        /// `dimensionsBySlots[mask]`: the non-NULL dimension blobs over the same slots.
        let dimensionsBySlots: [String]
        /// Per signal (`Signal.ordinal`), per level: (bucket key, count) of the track (1) in [2, 3),
        /// the rows where the signal is not 0.
        let buckets: [[String]]
        /// `countsBySlots[mask]`: every signal's sum (`Catalogue.signalColumns`' order) of the
        /// track (1) over the slots set in `mask`, as `sumBySlots`, one row per slot.
        let countsBySlots: [String]
        /// Per level: the dimension blobs of the track (1) in [2, 3).
        let dimensions: [String]
        /// Per signal (`Signal.ordinal`), per level: (track, count) of bucket 1 by the signal's
        /// count descending, ties by track, LIMIT 2: the first chunk of a ranked list. Plays' lists
        /// hold every row; another signal's only its positive counts (its partial ranked index,
        /// `Catalogue.rankedIndexes`): a ranking lists positive totals, and a track's negative or
        /// zero hours can only lower its total, so its positive ones bound it.
        let ranked: [[String]]
        /// Per signal, per level: the next chunk, seeking from the last entry read: (track, count)
        /// of bucket 1 ranked after count 2 and track 3, LIMIT 4. `count <= 2` is the index range
        /// (bucket, count DESC, track_id) is entered by, in both dialects; only the entries tied
        /// with the last one at its count and read already are stepped over, never the whole
        /// prefix (`LIMIT … OFFSET` stepped over every entry read before the chunk).
        let rankedAfter: [[String]]
        /// `listenersBySlots[mask]`: (listener plays, sketch) of the rows with a sketch over the
        /// slots of `sumBySlots[mask]`.
        let listenersBySlots: [String]
        /// Per level: (bucket key, listener plays, sketch) of the track (1) in [2, 3), rows with a sketch.
        let listeners: [String]

        init(_ kind: SubjectKind, placeholder p: (Int) -> String, rankedHint: (CounterTable, Signal) -> String = { _, _ in "" }) {
            func condition(_ table: CounterTable, _ index: Int) -> String {
                let key = table.keys.second
                return "\(table.idColumn) = \(p(1)) AND \(key) >= \(p(2 * index + 2)) AND \(key) < \(p(2 * index + 3))"
            }
            func batch(_ level: RollupLevel) -> CounterTable { Catalogue.batch(level, kind) }
            let batchTables = Catalogue.batchTables(kind)
            let masks = 0..<(1 << Catalogue.slotLevels.count)
            sumExpressionBySlots = masks.map { mask in
                let parts = Catalogue.slotLevels(mask: mask).enumerated().map { index, level in
                    let table = batch(level)
                    return "(SELECT coalesce(sum(plays), 0) FROM \(table.name) WHERE \(condition(table, index)))"
                }
                return "CAST(" + (parts.isEmpty ? "0" : parts.joined(separator: " + ")) + " AS bigint)"
            }
            sumBySlots = sumExpressionBySlots.map { "SELECT " + $0 }
            /// The rows of `columns` whose `blob` is not NULL, over the slots of each mask.
            func blobsBySlots(_ columns: String, _ blob: String) -> [String] {
                masks.map { mask in
                    let parts = Catalogue.slotLevels(mask: mask).enumerated().map { index, level in
                        let table = batch(level)
                        return "SELECT \(columns) FROM \(table.name) WHERE \(condition(table, index)) AND \(blob) IS NOT NULL"
                    }
                    return parts.isEmpty ? "SELECT \(columns) FROM \(batch(.hour).name) WHERE 1 = 0" : parts.joined(separator: " UNION ALL ")
                }
            }
            dimensionsBySlots = blobsBySlots("dimensions", "dimensions")
            buckets = Signal.allCases.map { signal in
                batchTables.map { table in
                    "SELECT \(table.keys.second), \(signal.rawValue) FROM \(table.name) WHERE \(condition(table, 0))"
                        + Catalogue.holding(signal)
                }
            }
            let sums = Catalogue.signalSums
            countsBySlots = masks.map { mask in
                let parts = Catalogue.slotLevels(mask: mask).enumerated().map { index, level in
                    let table = batch(level)
                    return "SELECT \(sums) FROM \(table.name) WHERE \(condition(table, index))"
                }
                return parts.isEmpty ? "SELECT \(sums) FROM \(batch(.hour).name) WHERE 1 = 0" : parts.joined(separator: " UNION ALL ")
            }
            dimensions = batchTables.map { table in
                "SELECT dimensions FROM \(table.name) WHERE \(condition(table, 0)) AND dimensions IS NOT NULL"
            }
            listenersBySlots = blobsBySlots("listener_plays, listeners", "listeners")
            listeners = batchTables.map { table in
                "SELECT \(table.keys.second), listener_plays, listeners FROM \(table.name) WHERE \(condition(table, 0)) AND listeners IS NOT NULL"
            }
            /// The condition a partial ranked index is entered by (its own `WHERE`, which SQLite
            /// wants in the query to use it).
            func positive(_ signal: Signal) -> String { signal == .plays ? "" : "AND \(signal.rawValue) > 0 " }
            ranked = Signal.allCases.map { signal in
                let count = signal.rawValue
                return batchTables.map { table in
                    "SELECT \(table.idColumn), \(count) FROM \(table.name)\(rankedHint(table, signal)) WHERE \(table.keys.second) = \(p(1)) " +
                        positive(signal) + "ORDER BY \(count) DESC, \(table.idColumn) LIMIT \(p(2))"
                }
            }
            rankedAfter = Signal.allCases.map { signal in
                let count = signal.rawValue
                return batchTables.map { table in
                    "SELECT \(table.idColumn), \(count) FROM \(table.name)\(rankedHint(table, signal)) WHERE \(table.keys.second) = \(p(1)) " +
                        positive(signal) + "AND \(count) <= \(p(2)) AND (\(count) < \(p(2)) OR \(table.idColumn) > \(p(3))) " +
                        "ORDER BY \(count) DESC, \(table.idColumn) LIMIT \(p(4))"
                }
            }
        }
    }
}

extension Catalogue {
    /// The bounds of realtime gaps (hour ranges) as a statement is given them: the rows of a
    /// subject in a gap are selected by one condition, written once (`realtimeRows`); only how
    /// the bounds are passed is the dialect's.
    enum GapBounds {
        /// One gap, its bounds two parameters: read by its own range of the by-id index.
        case one(lower: String, upper: String)
        /// Any number of gaps as two array parameters, of lower and of upper bounds, joined
        /// through `unnest`: one statement shape whatever their number, so that a read of the gaps
        /// with other parts stays one prepared statement and one round trip (PostgreSQL).
        case arrays(lowers: String, uppers: String)
    }

    /// The realtime rows `r` of the subject `id` (a parameter, or a column of an outer query) in
    /// `gaps`: a FROM clause ending in its condition, to which a statement may add `AND …`.
    static func realtimeRows(_ kind: SubjectKind, id: String, in gaps: GapBounds) -> String {
        let table = realtime(kind)
        let (hour, subject) = (table.keys.first, table.idColumn)
        return switch gaps {
        case let .one(lower, upper):
            "\(table.name) r WHERE r.\(subject) = \(id) AND r.\(hour) >= \(lower) AND r.\(hour) < \(upper)"
        case let .arrays(lowers, uppers):
            "unnest(\(lowers)::bigint[], \(uppers)::bigint[]) AS g (lower, upper) JOIN \(table.name) r"
                + " ON r.\(subject) = \(id) AND r.\(hour) >= g.lower AND r.\(hour) < g.upper"
        }
    }

    /// Σ plays of the subject `id` over `gaps` (as `realtimeRows`), a bigint expression: 0 over no rows.
    static func realtimeSum(_ kind: SubjectKind, id: String, over gaps: [GapBounds]) -> String {
        gaps.map { "(SELECT CAST(coalesce(sum(r.plays), 0) AS bigint) FROM \(realtimeRows(kind, id: id, in: $0)))" }
            .joined(separator: " + ")
    }
}

extension Catalogue {
    /// Statements on the realtime table (plays and both payloads in one row per (hour, track),
    /// in both dialects), in a dialect's placeholders (`placeholder(n)`); each reads the track
    /// (parameter 1) in the hours [2, 3) through the by-track index.
    struct RealtimeStatements {
        /// Per signal (`Signal.ordinal`): (hour, count) rows where the signal is not 0.
        let hours: [String]
        /// Every signal's sum (`Catalogue.signalColumns`' order).
        let counts: String
        /// The non-NULL dimension blobs.
        let dimensions: String
        /// (hour, listener plays, sketch) of the rows with a sketch.
        let listeners: String
        /// Per signal, the window's rows, not of one subject: (id, count) of every row in the
        /// hours [1, 2) that holds the signal, in key order (hour, then id) — a run of ascending
        /// ids per hour.
        let rowsInWindow: [String]
        /// The same summed per subject, by id: one run of ascending ids.
        let sumsInWindow: [String]

        init(_ kind: SubjectKind, placeholder p: (Int) -> String) {
            let table = Catalogue.realtime(kind)
            let (hour, track) = (table.keys.first, table.keys.second)
            let rows = Catalogue.realtimeRows(kind, id: p(1), in: .one(lower: p(2), upper: p(3)))
            let window = "FROM \(table.name) WHERE \(hour) >= \(p(1)) AND \(hour) < \(p(2))"
            rowsInWindow = Signal.allCases.map { signal in
                "SELECT \(track), \(signal.rawValue) \(window)" + Catalogue.holding(signal) + " ORDER BY \(hour), \(track)"
            }
            sumsInWindow = Signal.allCases.map { signal in
                "SELECT \(track), CAST(sum(\(signal.rawValue)) AS bigint) \(window)" + Catalogue.holding(signal)
                    + " GROUP BY \(track) ORDER BY \(track)"
            }
            hours = Signal.allCases.map { signal in "SELECT \(hour), \(signal.rawValue) FROM \(rows)" + Catalogue.holding(signal) }
            counts = "SELECT \(Catalogue.signalSums) FROM \(rows)"
            dimensions = "SELECT dimensions FROM \(rows) AND dimensions IS NOT NULL"
            listeners = "SELECT \(hour), listener_plays, listeners FROM \(rows) AND listeners IS NOT NULL"
        }
    }
}

/// A dialect's column types, for the table definitions both schemas share.
struct ColumnTypes {
    var integer: String
    var text: String
    var blob: String
    /// Appended to a counters table's definition (SQLite's `WITHOUT ROWID`: rows stored in key order).
    var keyedTable = ""
    /// Whether the batch tables get narrow covering indexes (id, bucket, plays), which keep
    /// sums and timelines off the wide rows where the engine stores rows in its primary key (SQLite).
    var narrowIndexes = false
}

extension Catalogue {
    /// What each covered hour was computed from, for the incremental batch (see `HourSource`).
    static func hourSourcesTable(_ types: ColumnTypes) -> String {
        let columns = [("hour", "\(types.integer) PRIMARY KEY"), ("fingerprint", "\(types.text) NOT NULL"),
                       ("files", "\(types.integer) NOT NULL"), ("bytes", "\(types.integer) NOT NULL"),
                       ("run_id", "\(types.integer) NOT NULL")]
        return "CREATE TABLE hour_sources (" + columns.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + ");"
    }

    /// The dimension counts (`DimensionEncoding` blobs) as a column of `tables`' rows, NULL
    /// meaning none.
    static func addDimensionsColumn(to tables: [CounterTable], _ types: ColumnTypes) -> String {
        tables.map { "ALTER TABLE \($0.name) ADD COLUMN dimensions \(types.blob);" }.joined(separator: "\n")
    }

    /// The listeners as columns of `tables`' rows: the plays that carried a listener id, and
    /// their sketch (`HyperLogLog.encoded`; NULL meaning none).
    static func addListenerColumns(to tables: [CounterTable], _ types: ColumnTypes) -> String {
        tables.map {
            "ALTER TABLE \($0.name) ADD COLUMN listener_plays \(types.integer) NOT NULL DEFAULT 0;\n" +
                "ALTER TABLE \($0.name) ADD COLUMN listeners \(types.blob);"
        }.joined(separator: "\n")
    }
}

extension Catalogue {
    /// The count columns of every counters table of both layers: one per signal, named as the
    /// signal (`plays`, `downloads`, …), in `Signal.allCases` order — the order `SignalCounts`
    /// is bound and read in. Every statement that writes or sums counts iterates these.
    static let signalColumns: [String] = Signal.allCases.map(\.rawValue)

    /// True of a row whose every signal is 0.
    static let allSignalsZero = signalColumns.map { "\($0) = 0" }.joined(separator: " AND ")

    /// Every signal's sum over the rows selected, as bigints (0 over none), in `signalColumns`' order.
    static let signalSums = signalColumns.map { "CAST(coalesce(sum(\($0)), 0) AS bigint)" }.joined(separator: ", ")

    /// A condition to append that keeps the rows holding `signal`: none for plays, whose rows
    /// are every row; ` AND likes <> 0` for another.
    static func holding(_ signal: Signal) -> String { signal == .plays ? "" : " AND \(signal.rawValue) <> 0" }

    /// The count columns of `signals` added to `tables` (a migration; plays came with the tables).
    static func addSignalColumns(_ signals: [Signal], to tables: [CounterTable], _ types: ColumnTypes) -> String {
        tables.flatMap { table in
            signals.map { "ALTER TABLE \(table.name) ADD COLUMN \($0.rawValue) \(types.integer) NOT NULL DEFAULT 0;" }
        }.joined(separator: "\n")
    }
}

extension SQLRow {
    /// The signal columns read from `column` on, in `Catalogue.signalColumns` order.
    func signalCounts(from column: Int) -> SignalCounts {
        var counts = SignalCounts()
        for (offset, signal) in Signal.allCases.enumerated() { counts[signal] = int64(at: column + offset) }
        return counts
    }
}

extension Catalogue {
    /// The name of the ranked index of `signal` on a batch table: (bucket, signal DESC,
    /// track_id), the rankings' sorted access (`ThresholdTopK`). Plays' index holds every row;
    /// another signal's holds only the rows where it is positive (`rankedIndexes`).
    static func rankedIndex(_ table: CounterTable, _ signal: Signal) -> String {
        signal == .plays ? "\(table.name)_ranked" : "\(table.name)_ranked_\(signal.rawValue)"
    }

    /// The partial ranked indexes of `signals` on every batch table (a migration): a row is in
    /// a signal's index only where that signal is positive — what a ranking reads
    /// (`BatchStatements.ranked`) — so they cost writes only where the signal is counted.
    static func rankedIndexes(_ signals: [Signal], _ kind: SubjectKind = .track) -> String {
        batchTables(kind).flatMap { table in
            signals.map { signal in
                "CREATE INDEX \(rankedIndex(table, signal)) ON \(table.name) (\(table.keys.second), \(signal.rawValue) DESC, \(table.idColumn))" +
                    (signal == .plays ? ";" : " WHERE \(signal.rawValue) > 0;")
            }
        }.joined(separator: "\n")
    }

    /// The signals that came after plays, added by one migration of each schema (SQLite's 7th of
    /// both files, PostgreSQL's 6th).
    static let signalsAfterPlays: [Signal] = [.downloads, .likes, .reposts, .comments]

    /// The signals every counters table held after those migrations.
    static let signalsOfSchema7: [Signal] = [.plays] + signalsAfterPlays
}

extension Catalogue {
    /// The counters tables of `kind` (a migration for a kind that came after the tracks): each
    /// key, the count columns of `signals`, both payloads; the realtime table indexed by
    /// (id, hour), the batch tables by each signal's ranked index. A migration, being history,
    /// names its signals (`signalsOfSchema7`): a signal added later adds its column to every family.
    static func createTables(_ kind: SubjectKind, signals: [Signal], realtime: Bool, batch: Bool, _ types: ColumnTypes) -> String {
        func create(_ table: CounterTable) -> String {
            let columns = [table.keys.first, table.keys.second].map { "\($0) \(types.integer) NOT NULL" }
                + signals.map { "\($0.rawValue) \(types.integer) NOT NULL DEFAULT 0" }
                + ["dimensions \(types.blob)", "listener_plays \(types.integer) NOT NULL DEFAULT 0", "listeners \(types.blob)",
                   "PRIMARY KEY (\(table.keys.first), \(table.keys.second))"]
            return "CREATE TABLE \(table.name) (" + columns.joined(separator: ", ") + ")\(types.keyedTable);"
        }
        var statements: [String] = []
        if realtime {
            let table = Catalogue.realtime(kind)
            statements += [create(table), "CREATE INDEX \(table.name)_by_id ON \(table.name) (\(table.idColumn), hour, plays);"]
        }
        if batch {
            for table in batchTables(kind) {
                statements.append(create(table))
                if types.narrowIndexes {
                    statements.append("CREATE INDEX \(table.name)_by_id ON \(table.name) (\(table.idColumn), \(table.bucketColumn), plays);")
                }
            }
            statements.append(rankedIndexes(signals, kind))
        }
        return statements.joined(separator: "\n")
    }
}
