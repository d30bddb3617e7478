"""Dashboard load: one wrk process per request kind (wrk's latency histogram is per process),
each pacing its connections to its share of the total request rate."""

import glob
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
LUA_SCRIPT = os.path.join(HERE, "dashboard.lua")

# A dashboard's mix: mostly single-track totals, then timelines, distinct listeners (a total or
# a day timeline, as the stats page asks beside the plays), multi-gets of 50 tracks, a creator's
# page (every signal's counts, the tracks table, a timeline, the creators ranked: SPEC §11) and
# top-N lists (the costliest, so the rarest).
MIX = (("totals", 0.30), ("timeline-hour", 0.15), ("timeline-day", 0.15), ("listeners", 0.12), ("multi-get", 0.10),
       ("creator", 0.10), ("top", 0.08))


def sample_track_ids(log_root, path, per_file=2000, seed=7):
    """Writes the track id and creator id (0: none) of events drawn from every hour file of the
    generated logs, one event per line: picking lines of this file uniformly gives the events'
    popularity skew, of tracks and of creators."""
    ids = []
    for file in sorted(glob.glob(os.path.join(log_root, "*", "*.ndjson"))):
        with open(file, "rb") as f:
            for _, line in zip(range(per_file), f):
                try:
                    event = json.loads(line)
                    ids.append((int(event["track_id"]), int(event.get("creator_id") or 0)))
                except (ValueError, KeyError, TypeError):
                    continue
    if not ids:
        raise RuntimeError(f"no events found under {log_root}")
    random.Random(seed).shuffle(ids)
    with open(path, "w") as f:
        f.write("\n".join(f"{track} {creator}" for track, creator in ids) + "\n")
    return len(ids)


def start(children, sampler, url, track_file, total_rate, connections_per_kind, seconds, label):
    """Starts the wrk processes for one step; returns them."""
    processes = []
    for kind, share in MIX:
        rate = total_rate * share
        mean_delay_ms = 0 if rate <= 0 else connections_per_kind * 1000.0 / rate
        child = children.start(f"wrk-{label}-{kind}", [
            "wrk", "-t1", f"-c{connections_per_kind}", f"-d{max(1, int(round(seconds)))}s",
            "--timeout", "10s", "-s", LUA_SCRIPT, url, "--", kind, track_file, f"{mean_delay_ms:.3f}"])
        sampler.watch("wrk", child.pid)
        processes.append((kind, child))
    return processes


def collect(processes, sampler, timeout):
    """Waits for the wrk processes and reads their figures: {kind: result}."""
    results = {}
    for kind, child in processes:
        if child.wait(timeout) is None:
            child.stop(grace=5)
        sampler.unwatch("wrk", child.pid)
        line = next((l for l in child.stdout().splitlines() if l.startswith("{")), None)
        if line is None:
            results[kind] = {"kind": kind, "failed": child.stderr_tail() or "no summary from wrk"}
            continue
        result = json.loads(line)
        seconds = max(result["duration_us"] / 1e6, 1e-9)
        result["requests_per_second"] = result["requests"] / seconds
        result["error_total"] = sum(result["errors"].values())
        results[kind] = result
    return results
