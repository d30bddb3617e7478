import Foundation
import SQLiteDB

/// The schema of one store file: an ordered list of migrations. The file's
/// `PRAGMA user_version` is the number of migrations applied; opening a file runs the missing
/// ones in one transaction, and refuses a file with a higher version than this program knows.
struct SQLiteSchema: Sendable {
    let migrations: [String]

    var version: Int { migrations.count }

    /// Brings the file up to `version`. Runs in a write transaction so that two processes
    /// opening a new store at once cannot both create it.
    func migrate(_ database: Database) throws {
        try database.write { db in
            let found = try db.userVersion()
            if found > version {
                throw CounterStoreError.schemaTooNew(path: db.path, found: found, supported: version)
            }
            guard found < version else { return }
            for migration in migrations[found...] {
                try db.execute(migration)
            }
            try db.setUserVersion(version)
        }
    }

    /// Checks, without writing, that a read-only connection sees exactly this version.
    func requireCurrent(_ database: Database) throws {
        let found = try database.userVersion()
        if found > version {
            throw CounterStoreError.schemaTooNew(path: database.path, found: found, supported: version)
        }
    }
}

extension SQLiteSchema {
    /// SQLite's column types (an `INTEGER PRIMARY KEY` is the rowid).
    static let types = ColumnTypes(integer: "INTEGER", text: "TEXT", blob: "BLOB", keyedTable: " WITHOUT ROWID", narrowIndexes: true)

    /// realtime.sqlite. Counters are keyed (hour, track_id) so compaction deletes contiguous
    /// rows; the covering index (track_id, hour, plays) serves the reader's per-track sums and
    /// timelines without touching the table (its payloads are read through it, by key).
    static let realtime = SQLiteSchema(migrations: [
        """
        CREATE TABLE realtime_counts (
            hour INTEGER NOT NULL,
            track_id INTEGER NOT NULL,
            plays INTEGER NOT NULL,
            PRIMARY KEY (hour, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX realtime_counts_by_track ON realtime_counts (track_id, hour, plays);
        CREATE TABLE partition_offsets (
            topic TEXT NOT NULL,
            partition INTEGER NOT NULL,
            next_offset INTEGER NOT NULL,
            high_watermark INTEGER,
            flushed_at INTEGER NOT NULL,
            PRIMARY KEY (topic, partition)
        ) WITHOUT ROWID;
        CREATE TABLE last_flush (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            flushed_at INTEGER NOT NULL
        );
        """,
        // Dimension counts (`DimensionEncoding` blobs) per (track, hour), in a table of their
        // own keyed like the counts, so that compaction deletes both with the same bounds, and
        // indexed (track_id, hour) for the reader.
        """
        CREATE TABLE realtime_dimensions (
            hour INTEGER NOT NULL,
            track_id INTEGER NOT NULL,
            dimensions BLOB NOT NULL,
            PRIMARY KEY (hour, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX realtime_dimensions_by_track ON realtime_dimensions (track_id, hour);
        """,
        // Counts every committed change of the realtime rows (flushes and compactions): the
        // reader's `SnapshotState.realtimeVersion`.
        "ALTER TABLE last_flush ADD COLUMN changes INTEGER NOT NULL DEFAULT 0;",
        // Listener sketches (docs/listeners.md) with the plays that carried a listener id, per
        // (track, hour), keyed like the counts so that compaction deletes them with the same
        // bounds, and indexed (track_id, hour) for the reader.
        """
        CREATE TABLE realtime_listeners (
            hour INTEGER NOT NULL,
            track_id INTEGER NOT NULL,
            listener_plays INTEGER NOT NULL,
            listeners BLOB NOT NULL,
            PRIMARY KEY (hour, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX realtime_listeners_by_track ON realtime_listeners (track_id, hour);
        """,
        // One row per (hour, track) holding the plays and both payloads, as the batch tables and
        // PostgreSQL's realtime table do: a flush upserts one table and its by-track index
        // instead of three of each. The payload tables' rows move into the counts rows; one
        // without a counts row (a flush of payloads without plays) becomes a row of 0 plays, as
        // the one upsert writes it now. Empty blobs, which no writer stored, become NULL (none).
        Catalogue.addDimensionsColumn(to: [Catalogue.realtime], types) + "\n"
            + Catalogue.addListenerColumns(to: [Catalogue.realtime], types) + "\n" + """
            INSERT INTO realtime_counts (hour, track_id, plays, dimensions)
                SELECT hour, track_id, 0, dimensions FROM realtime_dimensions WHERE length(dimensions) > 0
                ON CONFLICT (hour, track_id) DO UPDATE SET dimensions = excluded.dimensions;
            INSERT INTO realtime_counts (hour, track_id, plays, listener_plays, listeners)
                SELECT hour, track_id, 0, listener_plays, nullif(listeners, x'') FROM realtime_listeners
                WHERE listener_plays != 0 OR length(listeners) > 0
                ON CONFLICT (hour, track_id) DO UPDATE SET listener_plays = excluded.listener_plays, listeners = excluded.listeners;
            DROP TABLE realtime_dimensions;
            DROP TABLE realtime_listeners;
            """,
        // Hour stamps (`RealtimeHourStamps`): the `changes` number of the last commit that changed
        // each hour's rows, so that a reader re-reads only those hours; and the last commit that
        // stamped its hours. A writer of an older version counts changes without stamping, so a
        // reader trusts the stamps only while `stamped = changes`, and the next writer that finds
        // them apart stamps every hour again.
        """
        CREATE TABLE realtime_hours (
            hour INTEGER PRIMARY KEY,
            changes INTEGER NOT NULL
        );
        ALTER TABLE last_flush ADD COLUMN stamped INTEGER NOT NULL DEFAULT 0;
        """,
        // Every signal of SPEC §11 beside plays, a column each in the same rows (docs/creators-and-signals.md).
        Catalogue.addSignalColumns(Catalogue.signalsAfterPlays, to: [Catalogue.realtime], types),
        // The creators' counters (SPEC §11), a family of their own (docs/creators-and-signals.md).
        Catalogue.createTables(.creator, signals: Catalogue.signalsOfSchema7, realtime: true, batch: false, types),
    ])

    /// batch.sqlite. Version 1 kept hours only; version 2 keeps hours, days and months, each
    /// keyed (track_id, bucket) for a track's sums and timelines, and indexed
    /// (bucket, plays DESC, track_id) for the rankings' sorted access (see `ThresholdTopK`).
    /// Coverage is kept as normalized ranges, one row each.
    static let batch = SQLiteSchema(migrations: [
        """
        CREATE TABLE batch_counts (
            hour INTEGER NOT NULL,
            track_id INTEGER NOT NULL,
            plays INTEGER NOT NULL,
            run_id INTEGER NOT NULL,
            PRIMARY KEY (hour, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX batch_counts_by_track ON batch_counts (track_id, hour, plays);
        CREATE TABLE coverage (
            lower INTEGER PRIMARY KEY,
            upper INTEGER NOT NULL
        );
        CREATE TABLE batch_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            range_lower INTEGER NOT NULL,
            range_upper INTEGER NOT NULL,
            started_at INTEGER NOT NULL,
            finished_at INTEGER NOT NULL,
            events_read INTEGER NOT NULL,
            valid INTEGER NOT NULL,
            duplicates INTEGER NOT NULL,
            rejected INTEGER NOT NULL,
            tracks INTEGER NOT NULL,
            rows INTEGER NOT NULL
        );
        CREATE TABLE batch_run_rejections (
            run_id INTEGER NOT NULL REFERENCES batch_runs (id),
            reason TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (run_id, reason)
        ) WITHOUT ROWID;
        """,
        """
        CREATE TABLE batch_hours (
            track_id INTEGER NOT NULL,
            hour INTEGER NOT NULL,
            plays INTEGER NOT NULL,
            PRIMARY KEY (track_id, hour)
        ) WITHOUT ROWID;
        INSERT INTO batch_hours (track_id, hour, plays)
            SELECT track_id, hour, plays FROM batch_counts WHERE plays > 0 ORDER BY track_id, hour;
        DROP TABLE batch_counts;
        CREATE INDEX batch_hours_ranked ON batch_hours (hour, plays DESC, track_id);
        CREATE TABLE batch_days (
            track_id INTEGER NOT NULL,
            day INTEGER NOT NULL,
            plays INTEGER NOT NULL,
            PRIMARY KEY (track_id, day)
        ) WITHOUT ROWID;
        INSERT INTO batch_days (track_id, day, plays)
            SELECT track_id, hour / 24, sum(plays) FROM batch_hours GROUP BY track_id, hour / 24;
        CREATE INDEX batch_days_ranked ON batch_days (day, plays DESC, track_id);
        CREATE TABLE batch_months (
            track_id INTEGER NOT NULL,
            month INTEGER NOT NULL,
            plays INTEGER NOT NULL,
            PRIMARY KEY (track_id, month)
        ) WITHOUT ROWID;
        INSERT INTO batch_months (track_id, month, plays)
            SELECT track_id,
                   (CAST(strftime('%Y', day * 86400, 'unixepoch') AS INTEGER) - 1970) * 12
                       + CAST(strftime('%m', day * 86400, 'unixepoch') AS INTEGER) - 1 AS month,
                   sum(plays)
            FROM batch_days GROUP BY track_id, month;
        CREATE INDEX batch_months_ranked ON batch_months (month, plays DESC, track_id);
        """,
        // What each covered hour was computed from (see Seam/HourSource.swift): the incremental
        // batch compares it with the files on disk to find the hours that changed.
        Catalogue.hourSourcesTable(types),
        // Dimension counts in the rows of the hours, days and months: no second key and index
        // per row, and a batch run writes each (track, hour) once. NULL (rows written before
        // this migration) means none.
        Catalogue.addDimensionsColumn(to: Catalogue.batchTables, types),
        // Listener sketches and the plays that carried a listener id, in the same rows; rows
        // written before this migration have neither (NULL, 0).
        Catalogue.addListenerColumns(to: Catalogue.batchTables, types),
        // A track's plays over a span without its payloads: a popular track's rows carry dense
        // listener sketches (2.5 KB), a few to a page, and a ranking sums such tracks over every
        // bucket of its range. These narrow covering indexes keep sums and timelines off the
        // wide rows (docs/performance.md, 2026-12-07).
        """
        CREATE INDEX batch_hours_by_track ON batch_hours (track_id, hour, plays);
        CREATE INDEX batch_days_by_track ON batch_days (track_id, day, plays);
        CREATE INDEX batch_months_by_track ON batch_months (track_id, month, plays);
        """,
        // Every signal of SPEC §11 beside plays, a column each in the same rows, and its partial
        // ranked index (docs/creators-and-signals.md).
        Catalogue.addSignalColumns(Catalogue.signalsAfterPlays, to: Catalogue.batchTables, types) + "\n"
            + Catalogue.rankedIndexes(Catalogue.signalsAfterPlays),
        // The creators' counters (SPEC §11), a family of their own (docs/creators-and-signals.md).
        Catalogue.createTables(.creator, signals: Catalogue.signalsOfSchema7, realtime: false, batch: true, types),
    ])
}

/// Opening store files: the data directory is created if missing, writers migrate, readers
/// open read-only once the schema is known to exist.
enum StoreFile {
    static func createDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw CounterStoreError.cannotCreateDirectory(path: path, reason: reason)
        }
    }

    static func openWriter(path: String, schema: SQLiteSchema, configuration: DatabaseConfiguration) throws -> Database {
        let database = try Database(path: path, mode: .readWrite, configuration: configuration)
        try schema.migrate(database)
        try SQLiteDialect.defineMergeFunctions(database)
        return database
    }

    /// A read-only connection; it writes nothing when the file exists with the current schema,
    /// so a reader starts and serves on a full disk. A missing (or empty) file, or one whose
    /// schema is older than this program's, is first created or migrated through a short-lived
    /// writer connection, so a reader can start before any flush or batch run has happened;
    /// when a missing file cannot be created for lack of space, an empty in-memory stand-in
    /// answers until the file exists (no file, no data yet).
    static func openReader(path: String, schema: SQLiteSchema, configuration: DatabaseConfiguration) throws -> Database {
        if !hasContent(path) {
            do {
                _ = try openWriter(path: path, schema: schema, configuration: configuration)
            } catch let error as SQLiteError where error.mayNeedSpace && !hasContent(path) {
                return try Database.standIn(for: path, configuration: configuration) { try schema.migrate($0) }
            }
        }
        var reader = try Database(path: path, mode: .readOnly, configuration: configuration)
        if try reader.userVersion() < schema.version {
            _ = try openWriter(path: path, schema: schema, configuration: configuration)
            reader = try Database(path: path, mode: .readOnly, configuration: configuration)
        }
        try schema.requireCurrent(reader)
        return reader
    }

    /// Whether `path` exists and is not empty (a writer that failed for lack of space may have
    /// left an empty file behind; SQLite reads it as an empty database without a schema).
    private static func hasContent(_ path: String) -> Bool {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return size > 0
    }
}
