"""What the load test ran on, for the report's first lines."""

import os
import platform
import subprocess


def _first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        text = (out.stdout or out.stderr).strip()
        return text.splitlines()[0] if text else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def describe():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory_gib = 0.0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                memory_gib = int(line.split()[1]) / 2**20
    debian = "unknown"
    if os.path.exists("/etc/debian_version"):
        with open("/etc/debian_version") as f:
            debian = f.read().strip()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(memory_gib, 1),
        "kernel": platform.release(),
        "debian": debian,
        "swift": _first_line(["swift", "--version"]),
        "librdkafka": _first_line(["pkg-config", "--modversion", "rdkafka"]),
        "libmicrohttpd": _first_line(["pkg-config", "--modversion", "libmicrohttpd"]),
        "sqlite": _first_line(["pkg-config", "--modversion", "sqlite3"]),
        "wrk": _first_line(["wrk", "--version"]).split(" [")[0],
    }
