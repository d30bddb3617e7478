"""`loadtest/run --faults`: the faults `counterpoint run --embedded-faults` injected into its
embedded broker (read from its log), and the freshness of the probes sent while they were
under way, against the probes sent outside them (docs/faults.md)."""

import datetime
import re

import analysis

# A fault's window: from its injection until its own duration (a broker's downtime) plus this
# long after, the time clients take to notice and recover.
SETTLE_SECONDS = 10.0

_LINE = re.compile(r"^(\S+) info .*kafka\.fault=(\S+) kafka\.fault\.seconds=(\d+).*kafka fault injected")


def injected(stderr_path, wall_origin):
    """[(t, kind, seconds)] from run's log, t on the sampler's clock (`wall_origin` is the wall
    time of its zero)."""
    faults = []
    with open(stderr_path, "r", errors="replace") as f:
        for line in f:
            match = _LINE.match(line)
            if not match:
                continue
            try:
                wall = datetime.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S%z").timestamp()
            except ValueError:
                continue
            faults.append((wall - wall_origin, match.group(2), int(match.group(3))))
    return faults


def _freshness(probes):
    latencies = [p.latency_ms for p in probes if p.latency_ms is not None]
    return {"probes": len(probes), "not_visible": len(probes) - len(latencies),
            "p50_ms": analysis.percentile(latencies, 50), "p99_ms": analysis.percentile(latencies, 99),
            "max_ms": max(latencies) if latencies else None}


def unreachable_seconds(samples):
    """Seconds sampled with a `… Kafka connection` component degraded, and the longest such stretch."""
    total = longest = current = 0.0
    previous_t = None
    for sample in samples:
        if "degraded" not in sample:
            continue
        dt = sample["t"] - previous_t if previous_t is not None else 0.0
        previous_t = sample["t"]
        if any(name.endswith("Kafka connection") for name in sample["degraded"]):
            total += dt
            current += dt
            longest = max(longest, current)
        else:
            current = 0.0
    return round(total, 1), round(longest, 1)


def figures(faults, probes, samples):
    """Counts by kind, and freshness inside and outside the faults' windows."""
    windows = [(t, t + seconds + SETTLE_SECONDS) for t, _, seconds in faults]
    inside = [p for p in probes if p.phase not in (None, "ready") and any(a <= p.sent_at <= b for a, b in windows)]
    outside = [p for p in probes if p.phase not in (None, "ready") and not any(a <= p.sent_at <= b for a, b in windows)]
    by_kind = {}
    for _, kind, _ in faults:
        by_kind[kind] = by_kind.get(kind, 0) + 1
    total, longest = unreachable_seconds(samples)
    return {"injected": len(faults), "by_kind": dict(sorted(by_kind.items())),
            "during": _freshness(inside), "outside": _freshness(outside),
            "kafka_degraded_seconds": total, "kafka_degraded_longest_seconds": longest}


def section(figures, schedule):
    """The report's section on the faults."""
    if figures is None:
        return ""

    def ms(value):
        return "–" if value is None else f"{value:,.0f}"

    kinds = ", ".join(f"{kind} {count}" for kind, count in figures["by_kind"].items()) or "none"
    rows = ["| probes sent | count | never visible | p50 ms | p99 ms | max ms |", "|---|---:|---:|---:|---:|---:|"]
    for label, key in (("during faults", "during"), ("outside faults", "outside")):
        f = figures[key]
        rows.append(f"| {label} | {f['probes']:,} | {f['not_visible']:,} | {ms(f['p50_ms'])} | {ms(f['p99_ms'])} | {ms(f['max_ms'])} |")
    return "\n".join([
        "## Kafka faults",
        "",
        f"`counterpoint run --embedded-faults {schedule}` injected {figures['injected']:,} faults into its embedded "
        f"broker (three brokers): {kinds}. A probe counts as sent *during* a fault when it left within a fault's own "
        f"duration plus {SETTLE_SECONDS:g} s after it was injected. The consumers reported the Kafka cluster or a "
        f"broker unreachable for {figures['kafka_degraded_seconds']:g} s in all, {figures['kafka_degraded_longest_seconds']:g} s "
        "at the longest (sampled once a second from `/v1/status`).",
        "",
        *rows,
        "",
    ])
