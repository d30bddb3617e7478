#!/usr/bin/env python3
"""DuckDB yardstick for the batch layer: typed read_json over the same NDJSON files, keep valid
plays, de-duplicate by (hour, event_id), count per (track_id, hour) — on two threads — and print
the same checksum as c-scanner.c, so the result can be checked against the others.

    python3 duckdb-batch.py FILE...      (pip install duckdb)
"""
import sys
import time

import duckdb

files = sys.argv[1:]
connection = duckdb.connect()
connection.execute("SET threads = 2")
started = time.perf_counter()
row = connection.execute(
    """
    WITH events AS (
        SELECT event_id, type, track_id,
               CAST(epoch(occurred_at) // 3600 AS BIGINT) AS hour
        FROM read_json(?, format = 'newline_delimited', ignore_errors = true,
                       columns = {event_id: 'VARCHAR', type: 'VARCHAR', track_id: 'BIGINT',
                                  occurred_at: 'TIMESTAMP'})
        WHERE type = 'play' AND track_id BETWEEN 1 AND 9007199254740991
          AND regexp_full_match(event_id, '[A-Za-z0-9_-]{1,64}')
          AND occurred_at >= TIMESTAMP '2000-01-01' AND occurred_at < TIMESTAMP '2100-01-01'
    ),
    unique_events AS (SELECT DISTINCT hour, event_id, track_id FROM events),
    cells AS (SELECT track_id, hour, count(*) AS plays FROM unique_events GROUP BY track_id, hour)
    SELECT count(*), sum(plays), sum((track_id * 31 + hour) * plays) FROM cells
    """,
    [files],
).fetchone()
seconds = time.perf_counter() - started
lines = sum(1 for name in files for _ in open(name, "rb"))
print(f"keys={row[0]} counted={row[1]} seconds={seconds:.3f} events_per_sec={lines / seconds:.0f} checksum={row[2]}")
