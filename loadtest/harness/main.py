"""The load test (loadtest/run): generate event logs, start the service, step the replay
rate upward while dashboards query, break in with a batch rebuild, write the report."""

import argparse
import datetime
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import analysis      # noqa: E402
import charts        # noqa: E402
import dashboard     # noqa: E402
import faults        # noqa: E402
import machine       # noqa: E402
import report        # noqa: E402
from processes import Children   # noqa: E402
from probes import FreshnessProber   # noqa: E402
from sampler import Sampler      # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))

SMOKE = {"events": 30_000, "tracks": 2_000, "hours": 6, "steps": "2000,5000,max",
         "step_seconds": 3, "warmup_seconds": 1, "drain_seconds": 10, "http_rate": 200}


# Set by the signal handler before it raises: Python swallows an exception raised while a
# finalizer or logging's lock release runs ("Exception ignored in …"), so the steps also check it.
SIGNALLED = False


class Interrupted(Exception):
    pass


def log(message):
    print(f"loadtest: {message}", flush=True)


def parse_rate(text):
    text = text.strip().lower()
    if text in ("max", "0"):
        return 0
    multiplier = 1000 if text.endswith("k") else 1
    value = float(text[:-1] if text.endswith("k") else text) * multiplier
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a step rate must be positive or 'max', not {text!r}")
    return int(value)


def rate_label(rate):
    if rate == 0:
        return "max"
    return f"{rate // 1000}k" if rate % 1000 == 0 else str(rate)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        prog="loadtest/run",
        description="Replays generated event logs into Kafka at rising rates while dashboard traffic "
                    "queries the reader, runs a batch rebuild in the middle, and writes "
                    "loadtest/results/<timestamp>/report.md with charts. Every loop is bounded; all "
                    "traffic stays on loopback; every process started is stopped, also on Ctrl-C.")
    parser.add_argument("--smoke", action="store_true",
                        help="a short run (small logs, 3 s steps) that checks the load test itself works")
    parser.add_argument("--binary", help="the counterpoint executable (default: build a release one)")
    parser.add_argument("--out", help="report folder (default: loadtest/results/<UTC timestamp>)")
    parser.add_argument("--work", help="scratch folder for logs and stores (default: a temporary one, removed)")
    parser.add_argument("--events", type=int, default=3_000_000, help="events to generate (default 3,000,000)")
    parser.add_argument("--tracks", type=int, default=100_000, help="tracks in the generated logs (default 100,000)")
    parser.add_argument("--hours", type=int, default=24, help="hours the generated logs span (default 24)")
    parser.add_argument("--steps", default="25k,50k,100k,200k,max",
                        help="replay rates in events/s, 'max' for as fast as possible (default 25k,50k,100k,200k,max)")
    parser.add_argument("--step-seconds", type=float, default=60, help="measured hold of each step (default 60)")
    parser.add_argument("--warmup-seconds", type=float, default=10, help="unmeasured ramp before each hold (default 10)")
    parser.add_argument("--drain-seconds", type=float, default=60,
                        help="most time to wait for the consumer to catch up between steps (default 60)")
    parser.add_argument("--incident-rate",
                        help="rate of the step repeated with a batch rebuild running (default: the second step's)")
    parser.add_argument("--http-rate", type=float, default=2000, help="dashboard requests/s, all kinds (default 2000)")
    parser.add_argument("--http-connections", type=int, default=4, help="connections per request kind (default 4)")
    parser.add_argument("--probes-per-second", type=float, default=4, help="freshness probes per second (default 4)")
    parser.add_argument("--partitions", type=int, default=16, help="partitions of the embedded broker's topic (default 16)")
    parser.add_argument("--flush-interval-ms", type=int, default=250, help="realtime flush interval (default 250)")
    parser.add_argument("--brokers", help="a running Kafka (HOST:PORT[,…]) instead of the embedded broker")
    parser.add_argument("--topic", default="plays", help="topic (default plays)")
    parser.add_argument("--faults", nargs="?", const="drill", metavar="SCHEDULE",
                        help="inject Kafka faults into the embedded broker (`counterpoint run --embedded-faults`, "
                             "see docs/faults.md; default schedule: drill, a minute of every kind, repeated) and "
                             "report the freshness of the probes sent during them")
    parser.add_argument("--store", default="",
                        help="the stores: a postgresql:// URI passed to `counterpoint run` and `batch` "
                             "(default: SQLite files in the scratch folder)")
    parser.add_argument("--allow-remote-brokers", action="store_true",
                        help="accept --brokers that are not on loopback (traffic then leaves this machine)")
    args = parser.parse_args(argv)
    if args.smoke:
        for key, value in SMOKE.items():
            if parser.get_default(key) == getattr(args, key):
                setattr(args, key, value)
    args.rates = [parse_rate(part) for part in args.steps.split(",") if part.strip()]
    if not args.rates:
        parser.error("--steps needs at least one rate")
    args.incident = parse_rate(args.incident_rate) if args.incident_rate else args.rates[min(1, len(args.rates) - 1)]
    for name in ("events", "tracks", "hours", "http_connections", "partitions"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    if args.step_seconds < 1 or args.warmup_seconds < 0 or args.drain_seconds < 0 or args.http_rate < 0:
        parser.error("--step-seconds must be at least 1; --warmup-seconds, --drain-seconds and --http-rate 0 or more")
    if args.faults and args.brokers:
        parser.error("--faults injects into the embedded broker: leave out --brokers")
    if args.store and not args.store.startswith(("postgresql://", "postgres://")):
        parser.error("--store must be a postgresql:// (or postgres://) URI")
    if args.brokers and not args.allow_remote_brokers:
        for address in args.brokers.split(","):
            host = address.rsplit(":", 1)[0].strip("[]")
            if not _is_loopback(host):
                parser.error(f"broker {address} is not on loopback; add --allow-remote-brokers to use it")
    return args


def _is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def store_arguments(args):
    return ["--store", args.store] if args.store else []


def redacted_store(url):
    """The store as `StoreBackend.description` names it: a URI's password replaced by ***."""
    match = re.match(r"^([a-z]+://)([^/@]*?):([^/@]*)@(.*)$", url)
    return f"{match.group(1)}{match.group(2)}:***@{match.group(4)}" if match else url


def build_release():
    log("building a release counterpoint (swift build -c release)…")
    subprocess.run(["swift", "build", "-c", "release", "--product", "counterpoint"], cwd=ROOT, check=True)
    bin_path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_path, "counterpoint")


def wait_for_line(child, pattern, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = re.search(pattern, child.stdout())
        if match:
            return match
        if not child.running():
            raise RuntimeError(f"{child.name} exited early: {child.stderr_tail()}")
        time.sleep(0.1)
    raise RuntimeError(f"{child.name} did not print /{pattern}/ within {timeout} s")


class LoadTest:
    def __init__(self, args, binary, out, work):
        self.args, self.binary, self.out, self.work = args, binary, out, work
        self.children = Children(os.path.join(out, "processes"))
        os.makedirs(self.children.directory, exist_ok=True)
        self.sampler = None
        self.prober = None
        self.steps = []
        self.interrupted = False

    # --- setup -----------------------------------------------------------------------
    def generate(self):
        a = self.args
        log(f"generating {a.events:,} events over {a.hours} hours for {a.tracks:,} tracks…")
        result = subprocess.run([self.binary, "generate", "--logs", self.logs, "--events", str(a.events),
                                 "--tracks", str(a.tracks), "--hours", str(a.hours), "--seed", "42", "--json"],
                                check=True, capture_output=True, text=True)
        summary = json.loads(result.stdout)
        log(f"generated {summary['events']:,} events, {summary['bytes'] / 1e6:,.0f} MB")
        return summary

    @property
    def logs(self):
        return os.path.join(self.work, "logs")

    def start_service(self):
        a = self.args
        argv = [self.binary, "run", "--data-dir", os.path.join(self.work, "data"),
                "--logs", os.path.join(self.work, "archive"), "--listen", "127.0.0.1:0",
                "--topic", a.topic, "--partitions", str(a.partitions),
                "--flush-interval-ms", str(a.flush_interval_ms),
                # the scheduled batch stays out of the way: the incident step runs one on purpose
                "--batch-interval-seconds", "86400",
                # faults are logged at info, with the moment each was injected
                "--log-level", "info" if a.faults else "warning"]
        if a.faults:
            argv += ["--embedded-faults", a.faults]
        if a.brokers:
            argv += ["--brokers", a.brokers]
        argv += store_arguments(a)
        self.service = self.children.start("counterpoint-run", argv)
        reader = wait_for_line(self.service, r"reader listening on http://([0-9.]+):(\d+)/", 120)
        self.host, self.port = reader.group(1), int(reader.group(2))
        if a.brokers:
            self.brokers = a.brokers
        else:
            self.brokers = wait_for_line(self.service, r"embedded Kafka broker on ([^,\s]+),", 10).group(1)
        log(f"service up: reader http://{self.host}:{self.port}/, broker {self.brokers}")

    # --- steps -----------------------------------------------------------------------
    def run_steps(self):
        a = self.args
        plan = []
        for rate in a.rates:
            plan.append((rate, False))
            if rate == a.incident and not any(incident for _, incident in plan):
                plan.append((rate, True))
        if not any(incident for _, incident in plan):
            plan.insert(min(2, len(plan)), (a.incident, True))
        for number, (rate, incident) in enumerate(plan, 1):
            if SIGNALLED:
                raise Interrupted()
            label = rate_label(rate) + (" + batch" if incident else "")
            log(f"step {number}/{len(plan)}: {label} events/s for {a.warmup_seconds:g} + {a.step_seconds:g} s")
            self.steps.append(self.run_step(number, label, rate, incident))

    def run_step(self, number, label, rate, incident):
        a = self.args
        step = {"label": label, "target_rate": rate, "incident": incident}
        tag = f"{number}-" + re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
        self.sampler.phase = label
        replay = self.children.start(f"replay-{tag}", [
            self.binary, "replay", "--brokers", self.brokers, "--topic", a.topic, "--logs", self.logs,
            "--rate", str(rate), "--loop", "--duration", f"{a.warmup_seconds + a.step_seconds:g}",
            "--json", "--log-level", "warning"])
        self.sampler.watch("counterpoint replay", replay.pid)
        step["start"] = self.sampler.now()
        time.sleep(a.warmup_seconds)

        step["hold_start"] = self.sampler.now()
        self.prober.phase = label
        url = f"http://{self.host}:{self.port}"
        wrks = dashboard.start(self.children, self.sampler, url, self.track_file, a.http_rate,
                               a.http_connections, a.step_seconds, tag)
        batch = None
        if incident:
            time.sleep(min(2.0, a.step_seconds / 4))
            step["batch"] = {"start": self.sampler.now()}
            batch = self.children.start(f"batch-{tag}", [
                self.binary, "batch", "--data-dir", os.path.join(self.work, "data"), "--logs", self.logs,
                "--json", "--log-level", "warning"] + store_arguments(a))
            self.sampler.watch("counterpoint batch", batch.pid)
        step["http"] = dashboard.collect(wrks, self.sampler, timeout=a.step_seconds + 30)
        if batch is not None:
            # The hold lasts at least as long as the rebuild, so the whole rebuild is measured.
            status = batch.wait(timeout=600)
            if status is None:
                batch.stop(grace=10)
            step["batch"].update(self._batch_summary(batch, status))
            self.sampler.unwatch("counterpoint batch", batch.pid)
        step["hold_end"] = self.sampler.now()
        self.prober.phase = None

        if replay.wait(timeout=30) is None:
            replay.stop(grace=10)
        self.sampler.unwatch("counterpoint replay", replay.pid)
        try:
            summary = json.loads(replay.stdout())
            step["replay"] = {"events_per_second": summary["events_per_second"],
                              "delivery_errors": summary["delivery_errors"],
                              "delivery_p99_ms": summary["delivery_latency_ms"]["p99"]}
        except (ValueError, KeyError):
            step["replay"] = {"failed": replay.stderr_tail()}
        step["drain_seconds"] = self.drain()
        step["drain_end"] = self.sampler.now()
        return step

    def _batch_summary(self, batch, status):
        end = self.sampler.now()
        try:
            summary = json.loads(batch.stdout())
        except ValueError:
            return {"end": end, "status": status, "failed": batch.stderr_tail()}
        return {"end": end, "status": status, "hours": summary.get("hours"),
                "events_read": summary.get("events_read", summary.get("lines")),
                "events_per_second": summary.get("events_per_second"), "seconds": summary.get("seconds")}

    def drain(self):
        """Waits (bounded) until both consumer groups have caught up; returns how long it took."""
        self.sampler.phase = "drain"
        started = time.monotonic()
        deadline = started + self.args.drain_seconds
        while time.monotonic() < deadline:
            latest = next((s for s in reversed(self.sampler.samples) if "lag" in s), None)
            if (latest is not None and latest["t"] > self.sampler.now() - 1.5
                    and latest["lag"] <= 1000 and latest["archive_lag"] <= 1000):
                break
            time.sleep(0.5)
        return round(time.monotonic() - started, 1)

    # --- whole run -------------------------------------------------------------------
    def run(self):
        self.generated = self.generate()
        self.track_file = os.path.join(self.work, "tracks.txt")
        dashboard.sample_track_ids(self.logs, self.track_file)
        self.start_service()
        self.sampler = Sampler(self.host, self.port)
        self.wall_origin = time.time() - self.sampler.now()
        self.sampler.service_pid = self.service.pid
        self.sampler.watch("counterpoint run", self.service.pid)
        self.sampler.watch("load test harness", os.getpid())
        self.sampler.start()
        self.prober = FreshnessProber(self.brokers, self.args.topic, self.host, self.port, self.sampler.now,
                                      per_second=self.args.probes_per_second)
        self.prober.start()
        ready_ms = self.prober.await_first(timeout=120)
        if ready_ms is None:
            raise RuntimeError("no probe event became visible over HTTP within 120 s; see processes/counterpoint-run.err")
        log(f"pipeline ready: the first probe was visible after {ready_ms:,.0f} ms")
        try:
            self.run_steps()
        except Interrupted:
            self.interrupted = True
            log("interrupted: stopping every process, then writing the report of the finished steps")

    def stop(self):
        if self.prober is not None:
            self.prober.stop(wait_for_in_flight=not self.interrupted)
        if self.sampler is not None:
            self.sampler.stop()
        self.children.stop_all()


def main(argv):
    args = parse_arguments(argv)

    def on_signal(signum, frame):
        global SIGNALLED
        SIGNALLED = True
        raise Interrupted()
    # A parent may have started us with these signals blocked (some test runners do); the
    # mask is inherited across exec, and a blocked SIGTERM would never interrupt the run.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = os.path.abspath(args.out or os.path.join(ROOT, "loadtest", "results", stamp))
    os.makedirs(out, exist_ok=True)
    work = args.work or tempfile.mkdtemp(prefix="counterpoint-loadtest-")
    os.makedirs(work, exist_ok=True)
    test = None
    failure = None
    try:
        binary = os.path.abspath(args.binary) if args.binary else build_release()
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"loadtest: {binary} is not an executable")
        test = LoadTest(args, binary, out, work)
        test.run()
    except Interrupted:
        if test is not None:
            test.interrupted = True
        log("interrupted")
    except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
        failure = error
    finally:
        if test is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            test.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    if failure is not None:
        detail = f" ({failure.stderr.strip().splitlines()[-1]})" if getattr(failure, "stderr", None) else ""
        log(f"failed: {str(failure).rstrip('.')}{detail}; every process it started is stopped; their output is in {out}/processes")
        return 1
    if test is not None and SIGNALLED:
        test.interrupted = True
    if test is None or not test.steps:
        log("no step finished; no report")
        return 1
    figures = [analysis.step_figures(step, test.sampler.samples, test.prober.probes) for step in test.steps]
    # The report and figures.json name the store without its password.
    context = {"args": dict(vars(args), store=redacted_store(args.store)), "machine": machine.describe(), "generated": test.generated,
               "started": stamp, "interrupted": test.interrupted, "steps": test.steps,
               "sampler_errors": test.sampler.errors}
    if args.faults:
        injected = faults.injected(test.service.stderr_path, test.wall_origin)
        context["faults"] = faults.figures(injected, test.prober.probes, test.sampler.samples)
    charts.draw(out, test.sampler.samples, test.prober.probes, figures, test.steps, args)
    path = report.write(out, figures, context)
    with open(os.path.join(out, "data", "figures.json"), "w") as f:
        json.dump({"context": context, "figures": figures}, f, indent=1, default=str)
    with open(os.path.join(out, "data", "samples.json"), "w") as f:
        json.dump(test.sampler.samples, f)
    with open(os.path.join(out, "data", "probes.json"), "w") as f:
        json.dump([{"track_id": p.track_id, "phase": p.phase, "sent_at": p.sent_at, "latency_ms": p.latency_ms}
                   for p in test.prober.probes], f)
    log(f"report: {path}")
    print(report.headline(figures, args), flush=True)
    return 2 if test.interrupted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
