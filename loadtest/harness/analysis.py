"""Turns the samples, probes and wrk figures of each step into the step's figures, and
decides where the service saturates."""

# A consumer group's lag is bounded over a step's hold window when it consumed at least this
# share of what was produced, its lag grew by less than this share of the produce rate per
# second, ended below this many seconds of traffic, and no event was lost to an offset gap.
# A step is bounded when both groups (realtime counts and archiver) are, and every freshness
# probe became visible.
KEEP_UP_SHARE = 0.95
LAG_GROWTH_SHARE = 0.05
LAG_END_SECONDS = 2.0
# A step reached its target when the replay achieved at least this share of it.
TARGET_SHARE = 0.95


def percentile(values, q):
    """Nearest-rank percentile of a list (q in 0…100), or None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def slope(points):
    """Least-squares slope of (x, y) points, or 0 with fewer than two."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def rate(samples, key):
    usable = [s for s in samples if key in s]
    if len(usable) < 2 or usable[-1]["t"] <= usable[0]["t"]:
        return None
    return (usable[-1][key] - usable[0][key]) / (usable[-1]["t"] - usable[0]["t"])


def per_second_series(samples):
    """Rows of (t, produce/s, counted/s, archived/s, lag, archive lag) between consecutive samples."""
    rows = []
    stream = [s for s in samples if "produced" in s]
    for before, after in zip(stream, stream[1:]):
        dt = after["t"] - before["t"]
        if dt <= 0:
            continue
        rows.append((after["t"],
                     (after["produced"] - before["produced"]) / dt,
                     (after["counted"] - before["counted"]) / dt,
                     (after["archived"] - before["archived"]) / dt,
                     after["lag"],
                     after.get("archive_lag", 0)))
    return rows


def _window(stream, start, end):
    """The samples of [start, end]; with fewer than two (a short hold, a slow status answer),
    also the nearest sample on each side, so that a rate can still be taken."""
    inside = [s for s in stream if start <= s["t"] <= end]
    if len(inside) >= 2:
        return inside
    before = [s for s in stream if s["t"] < start][-1:]
    after = [s for s in stream if s["t"] > end][:1]
    return before + inside + after


def _bounded(produced, consumed, lag_points, lost):
    """Whether one consumer group kept up over a hold (see the shares above)."""
    if not produced or consumed is None:
        return None
    return (consumed >= KEEP_UP_SHARE * produced
            and slope(lag_points) <= LAG_GROWTH_SHARE * produced
            and lag_points[-1][1] <= LAG_END_SECONDS * produced
            and lost == 0)


def step_figures(step, samples, probes):
    """Figures of one step over its hold window (step: the dict the runner recorded)."""
    start, end = step["hold_start"], step["hold_end"]
    window = _window([s for s in samples if "produced" in s], start, end)
    produced = rate(window, "produced")
    counted = rate(window, "counted")
    archived = rate(window, "archived")
    lag_points = [(s["t"], s["lag"]) for s in window]
    archive_points = [(s["t"], s.get("archive_lag", 0)) for s in window]
    archive_lags = [lag for _, lag in archive_points]
    lag_end = lag_points[-1][1] if lag_points else None
    lag_max = max((lag for _, lag in lag_points), default=None)
    lag_growth = slope(lag_points)
    through_drain = [s for s in samples if start <= s["t"] <= step.get("drain_end", end) and "skipped" in s]
    lost = (through_drain[-1]["skipped"] - through_drain[0]["skipped"]) if len(through_drain) >= 2 else 0
    archive_lost = (through_drain[-1].get("archive_skipped", 0) - through_drain[0].get("archive_skipped", 0)
                    if len(through_drain) >= 2 else 0)

    latencies = [p.latency_ms for p in probes if p.phase == step["label"] and p.latency_ms is not None]
    invisible = sum(1 for p in probes if p.phase == step["label"] and p.latency_ms is None)

    realtime_bounded = _bounded(produced, counted, lag_points, lost) if lag_points else None
    if realtime_bounded is not None and invisible:
        realtime_bounded = False
    archive_bounded = _bounded(produced, archived, archive_points, archive_lost) if archive_points else None
    bounded = None if realtime_bounded is None or archive_bounded is None else realtime_bounded and archive_bounded
    target = step["target_rate"]
    # The replay's own count (warm-up and hold) is exact; the status-derived rate moves with
    # the consumer's view of the high watermarks.
    achieved = step.get("replay", {}).get("events_per_second", produced)
    reached = None if not target or achieved is None else achieved >= TARGET_SHARE * target

    cpu, rss, threads = {}, {}, {}
    for s in samples:
        if start <= s["t"] <= end:
            for label, value in s["cpu"].items():
                cpu.setdefault(label, []).append(value)
            for label, value in s["rss_mib"].items():
                rss[label] = max(rss.get(label, 0.0), value)
            for group, value in s.get("threads", {}).items():
                threads.setdefault(group, []).append(value)
    mean = lambda values: sum(values) / len(values) if values else 0.0

    http = step.get("http", {})
    http_ok = [r for r in http.values() if "requests" in r]
    return {
        "label": step["label"],
        "target_rate": target,
        "incident": step.get("incident", False),
        "seconds": end - start,
        "produced_per_second": produced,
        "counted_per_second": counted,
        "archived_per_second": archived,
        "lag_end": lag_end,
        "lag_max": lag_max,
        "lag_growth_per_second": lag_growth,
        "archive_lag_end": archive_lags[-1] if archive_lags else None,
        "archive_lag_max": max(archive_lags, default=None),
        "lost_events": lost,
        "archive_lost_events": archive_lost,
        "bounded": bounded,
        "realtime_bounded": realtime_bounded,
        "archive_bounded": archive_bounded,
        "target_reached": reached,
        "replay": step.get("replay", {}),
        "freshness": {
            "probes": len(latencies) + invisible,
            "not_visible": invisible,
            "p50_ms": percentile(latencies, 50),
            "p99_ms": percentile(latencies, 99),
            "max_ms": max(latencies, default=None),
        },
        "http": http,
        "http_requests_per_second": sum(r["requests_per_second"] for r in http_ok),
        "http_errors": sum(r["error_total"] for r in http_ok) + sum(1 for r in http.values() if "failed" in r),
        "cpu_percent": {label: mean(values) for label, values in cpu.items()},
        "rss_mib_max": rss,
        "service_threads_cpu_percent": {group: mean(values) for group, values in threads.items()},
        "drain_seconds": step.get("drain_seconds"),
        "batch": step.get("batch"),
    }


def saturation(figures, key="bounded"):
    """The highest achieved rate among steps where `key` held, and the slowest where it did not."""
    bounded = [f for f in figures if f[key]]
    unbounded = [f for f in figures if f[key] is False]
    best = max(bounded, key=lambda f: f["produced_per_second"] or 0, default=None)
    first_unbounded = min(unbounded, key=lambda f: f["produced_per_second"] or 0, default=None)
    return best, first_unbounded
