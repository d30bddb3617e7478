"""Once a second: the service's own view of the stream (GET /v1/status, GET /metrics) and
the CPU and resident memory of every process the load test runs (from /proc)."""

import http.client
import json
import os
import threading
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")

# Threads of the all-in-one `run` process, grouped by the names librdkafka, libmicrohttpd
# and Counterpoint give them, so the report can say where the service's CPU goes.
THREAD_GROUPS = (("rdk:mock", "embedded broker"), ("rdk:", "Kafka clients"), ("MHD", "HTTP"),
                 ("top-rankings", "HTTP"), ("rt-", "realtime consumer"), ("archiver", "archiver"),
                 ("batch-", "scheduled batch"))


def _read_stat(path):
    """(cpu ticks, resident bytes, name) of a process or thread, or None once it is gone."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    if fields[0] == "Z":  # exited, not yet reaped: nothing running, nothing resident
        return None
    return int(fields[11]) + int(fields[12]), int(fields[21]) * PAGE_BYTES, name


def thread_group(name):
    for prefix, group in THREAD_GROUPS:
        if name.startswith(prefix):
            return group
    return "other"


class StatusClient:
    """Keep-alive HTTP/1.1 to the reader; reconnects after any failure."""

    def __init__(self, host, port, timeout=5.0):
        self.host, self.port, self.timeout = host, port, timeout
        self.connection = None

    def get(self, path):
        for attempt in range(2):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
                self.connection.request("GET", path)
                answer = self.connection.getresponse()
                body = answer.read()
                return answer.status, body
            except (OSError, http.client.HTTPException):
                if self.connection is not None:
                    self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def json(self, path):
        status, body = self.get(path)
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
        return json.loads(body)


def stream_position(status):
    """Totals from GET /v1/status: produced (sum of the partitions' high watermarks),
    counted by the realtime consumer (sum of its committed next offsets), archived, lag."""
    realtime = status.get("realtime") or {}
    partitions = realtime.get("partitions") or []
    produced = sum(p.get("high_watermark") or 0 for p in partitions)
    counted = sum(p.get("next_offset") or 0 for p in partitions)
    archive = status.get("archive") or {}
    archived = archive.get("events_archived") or 0
    archive_skipped = archive.get("offset_gap_skipped_messages") or 0
    return {
        "produced": produced,
        "counted": counted,
        "lag": realtime.get("lag_events") or 0,
        "archived": archived,
        "archive_skipped": archive_skipped,
        # Behind the broker: neither archived nor known to be lost to a gap (invalid messages
        # are archived too, but the load test produces none).
        "archive_lag": max(0, produced - archived - archive_skipped),
        "offset_gaps": len(realtime.get("offset_gaps") or []),
    }


def metric_total(text, name):
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and (len(line) == len(name) or line[len(name)] in " {"):
            total += float(line.rsplit(" ", 1)[1])
    return total


class Sampler(threading.Thread):
    def __init__(self, host, port, interval=1.0):
        super().__init__(name="sampler", daemon=True)
        self.client = StatusClient(host, port)
        self.interval = interval
        self.samples = []
        self.phase = "start"
        self.origin = time.monotonic()
        self.service_pid = None
        self._watched = {}   # label -> set of pids
        self._last = {}      # (pid or (pid, tid)) -> cpu ticks at the previous sample
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.errors = 0

    def now(self):
        return time.monotonic() - self.origin

    def watch(self, label, pid):
        with self._lock:
            self._watched.setdefault(label, set()).add(pid)

    def unwatch(self, label, pid):
        with self._lock:
            self._watched.get(label, set()).discard(pid)

    def stop(self):
        self._stopping.set()
        self.join(timeout=10)

    def run(self):
        previous = time.monotonic()
        deadline = previous + self.interval
        while not self._stopping.wait(max(0.0, deadline - time.monotonic())):
            now = time.monotonic()
            elapsed, previous = now - previous, now
            deadline = max(deadline + self.interval, now)
            self.samples.append(self._sample(elapsed))

    def _cpu_percent(self, key, ticks, elapsed):
        before = self._last.get(key)
        self._last[key] = ticks
        if before is None or elapsed <= 0:
            return 0.0
        return 100.0 * (ticks - before) / CLOCK_TICKS / elapsed

    def _sample(self, elapsed):
        row = {"t": round(self.now(), 3), "phase": self.phase, "cpu": {}, "rss_mib": {}, "threads": {}}
        try:
            status = self.client.json("/v1/status")
            row.update(stream_position(status))
            row["degraded"] = [c.get("name") for c in status.get("components") or [] if c.get("state") != "running"]
            _, metrics = self.client.get("/metrics")
            row["skipped"] = metric_total(metrics.decode("utf-8", "replace"),
                                          "counterpoint_offset_gap_skipped_events_total")
        except Exception:  # a slow or restarting reader is a gap in the series, not a crash
            self.errors += 1
        with self._lock:
            watched = {label: set(pids) for label, pids in self._watched.items()}
        for label, pids in watched.items():
            cpu, rss = 0.0, 0
            for pid in pids:
                stat = _read_stat(f"/proc/{pid}/stat")
                if stat is None:
                    continue
                cpu += self._cpu_percent(pid, stat[0], elapsed)
                rss += stat[1]
            if pids:
                row["cpu"][label] = round(cpu, 1)
                row["rss_mib"][label] = round(rss / 2**20, 1)
        if self.service_pid:
            row["threads"] = self._service_threads(elapsed)
        return row

    def _service_threads(self, elapsed):
        groups = {}
        try:
            tids = os.listdir(f"/proc/{self.service_pid}/task")
        except OSError:
            return groups
        for tid in tids:
            stat = _read_stat(f"/proc/{self.service_pid}/task/{tid}/stat")
            if stat is None:
                continue
            group = thread_group(stat[2])
            groups[group] = groups.get(group, 0.0) + self._cpu_percent((self.service_pid, tid), stat[0], elapsed)
        return {group: round(cpu, 1) for group, cpu in groups.items()}
