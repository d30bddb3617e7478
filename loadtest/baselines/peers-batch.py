#!/usr/bin/env python3
"""The batch layer's peers doing the batch job's work: read NDJSON event logs, keep the events
docs/event-format.md accepts, de-duplicate them by (hour, event_id), and write durably, per
(track, hour): plays, the waveform (plays by start position, 100 buckets:
min(99, ⌊100 × position_ms / duration_ms⌋)), plays by country and by client, the plays that
carried a listener_id and (ClickHouse only) a listener sketch; then the same per (track, day)
and per (track, month).

    python peers-batch.py clickhouse DIRECTORY FILE...   chDB (in-process ClickHouse): MergeTree tables
                                                         in DIRECTORY, fsync'd parts, `uniqHLL12` states,
                                                         `sumMap` maps, day and month rollups from the hours
    python peers-batch.py duckdb DATABASE FILE...        DuckDB: tables in a .duckdb file, CHECKPOINT at
                                                         the end, MAP columns (counts by key, listed),
                                                         no sketches (DuckDB has no mergeable distinct-
                                                         count state); day and month rollups from the
                                                         hours' counts by key

Run with the benchmark's own virtualenv (`loadtest/bench-batch peers` makes it: pip install chdb
duckdb); neither is a dependency of the product or its tests. Two threads each, as `batch` has
two workers on this machine. Prints one JSON object: seconds (from the first statement to the
data being durable; the interpreter's start and the imports are left out), rows per table, and
checksum = Σ (track_id × 31 + hour) × plays over the (track, hour) rows, mod 2^64 — the C
scanner's and bench-batch's checksum, so the answers can be compared.
"""
import json
import os
import shutil
import sys
import time

# Validation shared by both dialects, as docs/event-format.md states it. Lines are read raw,
# so that a line longer than 64 KiB, bad JSON or bad UTF-8 is rejected as `batch` rejects it.
EVENT_ID = "^[A-Za-z0-9_-]{1,64}$"
RFC3339_UTC = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|\+00:00)$"
MAX_TRACK = 9007199254740991
LOW_MS, HIGH_MS = 946684800000, 4102444800000  # 2000-01-01, 2100-01-01


class Timed:
    """Prints each statement's seconds to standard error: where a peer's time goes."""

    def __init__(self, target, method="execute"):
        self.target, self.method = target, method

    def __getattr__(self, name):
        call = getattr(self.target, name)
        if name != self.method:
            return call

        def timed(sql, *arguments):
            started = time.perf_counter()
            result = call(sql, *arguments)
            print(f"  {time.perf_counter() - started:6.2f} s  {' '.join(sql.split())[:90]}", file=sys.stderr)
            return result
        return timed


def clickhouse(directory, files):
    import chdb.session

    shutil.rmtree(directory, ignore_errors=True)
    session = Timed(chdb.session.Session(directory), "query")
    query = lambda sql: session.query(sql + " SETTINGS max_threads = 2")
    paths = ",".join("'" + f.replace("'", "\\'") + "'" for f in files)
    durable = "SETTINGS fsync_after_insert = 1, fsync_part_directory = 1"
    maps = """waveform Map(UInt8, UInt64), countries Map(String, UInt64), clients Map(String, UInt64),
              listener_plays UInt64, listeners AggregateFunction(uniqHLL12, UInt64)"""
    session.query("CREATE DATABASE IF NOT EXISTS counts")
    for table, bucket in [("hours", "hour"), ("days", "day"), ("months", "month")]:
        session.query(f"""CREATE TABLE counts.{table} (track_id UInt64, {bucket} UInt32, plays UInt64, {maps})
                          ENGINE = MergeTree ORDER BY (track_id, {bucket}) {durable}""")
    started = time.perf_counter()
    # Typed fields of the valid lines; a field of the wrong JSON type is an invalid event.
    query(f"""
        INSERT INTO counts.hours
        WITH lines AS (
            SELECT line FROM file([{paths}], 'LineAsString', 'line String')
            WHERE length(line) <= 65536 AND isValidJSON(line)
        ),
        -- One parse a line: every member's raw JSON text by key. A value's JSON type is read from
        -- its text: toInt64OrNull takes integers only (not "42", 1.5 or 1e3; a '+' is not JSON),
        -- strings start with a quote and are unescaped only when they hold an escape.
        members AS (
            SELECT CAST(JSONExtractKeysAndValuesRaw(line), 'Map(String, String)') AS m FROM lines
        ),
        fields AS (
            SELECT
                m['event_id'] AS event_raw, m['type'] AS type_raw, m['track_id'] AS track_raw, m['occurred_at'] AS time_raw,
                m['listener_id'] AS listener_raw, m['position_ms'] AS position_raw, m['duration_ms'] AS duration_raw,
                m['client'] AS client_raw, m['country'] AS country_raw,
                if(position(event_raw, '\\\\') = 0, substring(event_raw, 2, length(event_raw) - 2), JSONExtractString(event_raw)) AS event_id,
                toInt64OrNull(track_raw) AS track_id,
                startsWith(time_raw, '"') AS time_is_text,
                if(time_is_text, substring(time_raw, 2, length(time_raw) - 2), '') AS time_text,
                toInt64OrNull(time_raw) AS time_ms,
                -- Strict: an hour 25 or a 30 February is no time (the fraction cannot move the hour).
                parseDateTimeOrNull(substring(time_text, 1, 19), '%Y-%m-%dT%H:%i:%s', 'UTC') AS time_parsed,
                toInt64OrNull(listener_raw) AS listener_id,
                toInt64OrNull(position_raw) AS position_ms,
                toInt64OrNull(duration_raw) AS duration_ms,
                if(startsWith(client_raw, '"'), if(position(client_raw, '\\\\') = 0, substring(client_raw, 2, length(client_raw) - 2), JSONExtractString(client_raw)), NULL) AS client,
                if(startsWith(country_raw, '"'), if(position(country_raw, '\\\\') = 0, substring(country_raw, 2, length(country_raw) - 2), JSONExtractString(country_raw)), NULL) AS country
            FROM members
        ),
        valid AS (
            SELECT event_id, assumeNotNull(track_id) AS track_id,
                   if(time_is_text, intDiv(toUnixTimestamp(assumeNotNull(time_parsed)), 3600), intDiv(assumeNotNull(time_ms), 3600000)) AS hour,
                   if(listener_id IS NULL, NULL, toNullable(toUInt64(assumeNotNull(listener_id)))) AS listener,
                   if(position_ms IS NULL OR duration_ms IS NULL, NULL,
                      toNullable(toUInt8(least(99, intDiv(toInt128(assumeNotNull(position_ms)) * 100, assumeNotNull(duration_ms)))))) AS bucket,
                   client, country
            FROM fields
            WHERE startsWith(event_raw, '"') AND match(event_id, '{EVENT_ID}')
              AND type_raw = '"play"'
              AND track_id BETWEEN 1 AND {MAX_TRACK}
              AND ((time_is_text AND match(time_text, '{RFC3339_UTC}')
                    AND toUnixTimestamp(time_parsed) BETWEEN {LOW_MS // 1000} AND {HIGH_MS // 1000 - 1})
                   OR time_ms BETWEEN {LOW_MS} AND {HIGH_MS - 1})
              AND (listener_raw IN ('', 'null') OR listener_id >= 0)
              AND (position_raw IN ('', 'null') OR position_ms >= 0)
              AND (duration_raw IN ('', 'null') OR duration_ms > 0)
              AND (client_raw IN ('', 'null') OR (client IS NOT NULL AND length(client) <= 32))
              AND (country_raw IN ('', 'null') OR (country IS NOT NULL AND length(country) <= 32))
        ),
        unique_events AS (
            SELECT hour, event_id, any(track_id) AS track_id, any(listener) AS listener, any(bucket) AS bucket,
                   any(client) AS client, any(country) AS country
            FROM valid GROUP BY hour, event_id
        )
        SELECT track_id, hour, count() AS plays,
               sumMapIf(map(assumeNotNull(bucket), toUInt64(1)), isNotNull(bucket)),
               sumMapIf(map(assumeNotNull(country), toUInt64(1)), isNotNull(country)),
               sumMapIf(map(assumeNotNull(client), toUInt64(1)), isNotNull(client)),
               countIf(isNotNull(listener)),
               uniqHLL12StateIf(assumeNotNull(listener), isNotNull(listener))
        FROM unique_events GROUP BY track_id, hour
    """)
    rollup = """sum(plays), sumMap(waveform), sumMap(countries), sumMap(clients), sum(listener_plays),
                uniqHLL12MergeState(listeners)"""
    query(f"INSERT INTO counts.days SELECT track_id, intDiv(hour, 24) AS day, {rollup} FROM counts.hours GROUP BY track_id, day")
    query(f"""INSERT INTO counts.months SELECT track_id, (toYear(toDate(day)) - 1970) * 12 + toMonth(toDate(day)) - 1 AS month,
              {rollup} FROM counts.days GROUP BY track_id, month""")
    seconds = time.perf_counter() - started
    rows = {table: int(session.query(f"SELECT count() FROM counts.{table}", "CSV").bytes().strip())
            for table in ("hours", "days", "months")}
    checksum = int(session.query("SELECT sum((track_id * 31 + hour) * plays) FROM counts.hours", "CSV").bytes().strip())
    listeners = session.query("SELECT uniqHLL12Merge(listeners) FROM counts.months", "CSV").bytes().strip().decode()
    session.close()
    return {"seconds": seconds, "rows": rows, "checksum": checksum % 2**64, "distinct_listeners_estimate": int(listeners)}


def duckdb_job(database, files):
    import duckdb

    for path in (database, database + ".wal"):
        if os.path.exists(path):
            os.remove(path)
    connection = duckdb.connect(database)
    connection = Timed(connection)
    connection.execute("SET threads = 2")
    connection.execute("SET preserve_insertion_order = false")
    started = time.perf_counter()
    # One column per line: no delimiter or quote character occurs in the logs; a line that is not
    # UTF-8 is an error, skipped (rejected) by ignore_errors.
    connection.execute(f"""
        CREATE TEMP TABLE unique_events AS
        WITH lines AS (
            SELECT line FROM read_csv(?, columns = {{'line': 'VARCHAR'}}, header = false, delim = '\x1f', quote = '',
                                      escape = '', auto_detect = false, ignore_errors = true, max_line_size = 4194304)
            WHERE strlen(line) <= 65536 AND json_valid(line)
        ),
        -- One parse of the line: each known member's JSON value (NULL when absent); the small
        -- values are then typed and read on their own. Materialized: inlined, the parse would be
        -- repeated for every field read from it.
        members AS MATERIALIZED (
            SELECT json_transform(line, '{{"event_id": "JSON", "type": "JSON", "track_id": "JSON", "occurred_at": "JSON",
                "listener_id": "JSON", "position_ms": "JSON", "duration_ms": "JSON", "client": "JSON", "country": "JSON"}}') AS j
            FROM lines
        ),
        -- Each value's JSON type from its text: a string starts with a quote (and is unescaped only
        -- when it holds an escape), an integer is digits with an optional minus.
        fields AS (
            SELECT CAST(j.event_id AS VARCHAR) AS event_raw, CAST(j.type AS VARCHAR) AS type_raw,
                   CAST(j.track_id AS VARCHAR) AS track_raw, CAST(j.occurred_at AS VARCHAR) AS time_raw,
                   CAST(j.listener_id AS VARCHAR) AS listener_raw, CAST(j.position_ms AS VARCHAR) AS position_raw,
                   CAST(j.duration_ms AS VARCHAR) AS duration_raw, CAST(j.client AS VARCHAR) AS client_raw,
                   CAST(j.country AS VARCHAR) AS country_raw
            FROM members
        ),
        typed AS MATERIALIZED (
            SELECT *,
                   CASE WHEN starts_with(event_raw, '"') THEN
                        CASE WHEN contains(event_raw, '\\') THEN event_raw->>'$' ELSE event_raw[2:-2] END END AS event_id,
                   CASE WHEN regexp_full_match(track_raw, '-?[0-9]+') THEN TRY_CAST(track_raw AS HUGEINT) END AS track,
                   CASE WHEN starts_with(time_raw, '"') AND regexp_full_match(time_raw[2:-2], '{RFC3339_UTC}')
                        THEN epoch_ms(TRY_CAST(replace(replace(time_raw[2:-2], 'Z', ''), '+00:00', '') AS TIMESTAMP))
                        WHEN regexp_full_match(time_raw, '-?[0-9]+') THEN TRY_CAST(time_raw AS BIGINT) END AS time_ms,
                   CASE WHEN regexp_full_match(listener_raw, '-?[0-9]+') THEN TRY_CAST(listener_raw AS HUGEINT) END AS listener,
                   CASE WHEN regexp_full_match(position_raw, '-?[0-9]+') THEN TRY_CAST(position_raw AS HUGEINT) END AS position,
                   CASE WHEN regexp_full_match(duration_raw, '-?[0-9]+') THEN TRY_CAST(duration_raw AS HUGEINT) END AS duration,
                   CASE WHEN starts_with(client_raw, '"') THEN client_raw->>'$' END AS client,
                   CASE WHEN starts_with(country_raw, '"') THEN country_raw->>'$' END AS country
            FROM fields
        ),
        valid AS (
            SELECT event_id, CAST(track AS BIGINT) AS track_id, time_ms // 3600000 AS hour, CAST(listener AS BIGINT) AS listener,
                   CASE WHEN position IS NOT NULL AND duration IS NOT NULL
                        THEN CAST(least(99, position * 100 // duration) AS UTINYINT) END AS bucket,
                   client, country
            FROM typed
            WHERE regexp_full_match(event_id, '{EVENT_ID[1:-1]}')
              AND type_raw = '"play"'
              AND track BETWEEN 1 AND {MAX_TRACK}
              AND time_ms BETWEEN {LOW_MS} AND {HIGH_MS - 1}
              AND (listener_raw IS NULL OR listener_raw = 'null' OR listener >= 0)
              AND (position_raw IS NULL OR position_raw = 'null' OR position >= 0)
              AND (duration_raw IS NULL OR duration_raw = 'null' OR duration > 0)
              AND (client_raw IS NULL OR client_raw = 'null' OR strlen(client) <= 32)
              AND (country_raw IS NULL OR country_raw = 'null' OR strlen(country) <= 32)
        )
        SELECT hour, event_id, any_value(track_id) AS track_id, any_value(listener) AS listener, any_value(bucket) AS bucket,
               any_value(client) AS client, any_value(country) AS country
        FROM valid GROUP BY hour, event_id
    """, [files])
    # Per (track, hour): plays, and the plays of each waveform bucket, country and client (DuckDB's
    # histogram() aggregate takes three times longer than counting by key and listing the counts).
    connection.execute("""CREATE TEMP TABLE hour_plays AS
        SELECT track_id, hour, count(*) AS plays, count(listener) AS listener_plays FROM unique_events GROUP BY ALL""")
    for dimension in ("bucket", "country", "client"):
        connection.execute(f"""CREATE TEMP TABLE hour_{dimension} AS
            SELECT track_id, hour, {dimension} AS key, count(*) AS plays FROM unique_events
            WHERE {dimension} IS NOT NULL GROUP BY ALL""")
    # Hours, days and months from those counts: sums by key, then one map per (track, bucket).
    levels = {"hours": ("hour", "hour"), "days": ("day", "hour // 24"),
              "months": ("month", "(year(to_timestamp(hour * 3600)) - 1970) * 12 + month(to_timestamp(hour * 3600)) - 1")}
    for table, (name, bucket) in levels.items():
        maps = {dimension: f"""(SELECT track_id, b, map(list(key), list(plays)) AS {column} FROM (
                    SELECT track_id, {bucket} AS b, key, sum(plays)::UBIGINT AS plays FROM hour_{dimension} GROUP BY ALL) GROUP BY ALL)"""
                for dimension, column in (("bucket", "waveform"), ("country", "countries"), ("client", "clients"))}
        connection.execute(f"""CREATE TABLE {table} AS
            SELECT track_id, b AS {name}, plays, waveform, countries, clients, listener_plays
            FROM (SELECT track_id, {bucket} AS b, sum(plays)::UBIGINT AS plays, sum(listener_plays)::UBIGINT AS listener_plays
                  FROM hour_plays GROUP BY ALL)
            LEFT JOIN {maps["bucket"]} USING (track_id, b)
            LEFT JOIN {maps["country"]} USING (track_id, b)
            LEFT JOIN {maps["client"]} USING (track_id, b)""")
    connection.execute("CHECKPOINT")
    seconds = time.perf_counter() - started
    rows = {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in ("hours", "days", "months")}
    checksum = connection.execute("SELECT sum((track_id * 31 + hour)::HUGEINT * plays) FROM hours").fetchone()[0]
    connection.close()
    return {"seconds": seconds, "rows": rows, "checksum": int(checksum) % 2**64}


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("clickhouse", "duckdb"):
        sys.exit(__doc__)
    job = clickhouse if sys.argv[1] == "clickhouse" else duckdb_job
    print(json.dumps(job(sys.argv[2], sys.argv[3:])))
