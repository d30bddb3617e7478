"""Freshness: the time from producing an event to the first HTTP answer that counts it.

A probe is one valid play event for a track id no generated event uses, produced with
kafka-python (a client someone else wrote) into the same topic the load goes to, keyed by
its track id like every other event, so it waits behind the load of one partition. One
multi-get (GET /v1/plays?track_id=…) every few milliseconds checks every probe still in
flight; a probe counts from just before its send to the answer that first shows it."""

import json
import random
import threading
import time

from sampler import StatusClient

# Far above any generated track id, below the event format's 2^53 - 1.
PROBE_TRACK_BASE = 8_000_000_000_000_000


class Probe:
    __slots__ = ("track_id", "phase", "sent_at", "sent_mono", "latency_ms")

    def __init__(self, track_id, phase, sent_at, sent_mono):
        self.track_id = track_id
        self.phase = phase
        self.sent_at = sent_at        # seconds since the load test began
        self.sent_mono = sent_mono
        self.latency_ms = None        # None while in flight; stays None if never visible


class FreshnessProber(threading.Thread):
    def __init__(self, brokers, topic, host, port, clock, per_second=4.0, poll_ms=5.0,
                 give_up_seconds=60.0):
        super().__init__(name="freshness", daemon=True)
        from kafka import KafkaProducer  # Debian's python3-kafka
        self.producer = KafkaProducer(bootstrap_servers=brokers.split(","), acks=1, linger_ms=0,
                                      client_id="counterpoint-loadtest-probe")
        self.producer.partitions_for(topic)  # metadata now, so the first probe does not wait for it
        self.topic = topic
        self.client = StatusClient(host, port)
        self.clock = clock
        self.interval = 1.0 / per_second
        self.poll = poll_ms / 1000.0
        self.give_up = give_up_seconds
        self.probes = []
        self._pending = []           # probes in flight: the only ones the 5 ms poll looks at
        self.phase = None             # probes are sent only while a phase is set
        self._stopping = threading.Event()
        self._sequence = int(time.time() * 1000) % 1_000_000_000 * 1000

    def stop(self, wait_for_in_flight=True):
        """Stops sending; waits (bounded) for the probes in flight to show or give up."""
        self.phase = None
        deadline = time.monotonic() + self.give_up + 5
        # Only reads the pending list: the prober thread alone rewrites it.
        while wait_for_in_flight and any(p.latency_ms is None and time.monotonic() - p.sent_mono < self.give_up
                                         for p in self._pending):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self._stopping.set()
        self.join(timeout=10)
        self.producer.close(timeout=5)

    def await_first(self, timeout):
        """Sends probes until one is visible over HTTP: the whole pipeline (broker, consumer
        group, flush, reader) works. Returns its latency in milliseconds, or None."""
        deadline = time.monotonic() + timeout
        self.phase = "ready"
        try:
            while time.monotonic() < deadline:
                seen = [p.latency_ms for p in self.probes if p.phase == "ready" and p.latency_ms is not None]
                if seen:
                    return seen[0]
                time.sleep(0.05)
            return None
        finally:
            self.phase = None

    def in_flight(self):
        """Drops answered and given-up probes from the pending list (prober thread only)."""
        now = time.monotonic()
        self._pending = [p for p in self._pending if p.latency_ms is None and now - p.sent_mono < self.give_up]
        return self._pending

    def run(self):
        next_send = time.monotonic()
        while not self._stopping.is_set():
            now = time.monotonic()
            if self.phase is not None and now >= next_send:
                self._send(self.phase)
                # Jittered, so that probes land anywhere in the flush cycle: at exactly the flush
                # interval they would drift through it slowly and sample it in long sawteeth.
                next_send = now + self.interval * random.uniform(0.5, 1.5)
            pending = self.in_flight()
            if pending:
                self._check(pending)
            time.sleep(self.poll)

    def _send(self, phase):
        self._sequence += 1
        track_id = PROBE_TRACK_BASE + self._sequence
        occurred_at = int(time.time() * 1000)
        event = {"event_id": f"loadtest-probe-{track_id}", "type": "play", "track_id": track_id,
                 "occurred_at": occurred_at}
        probe = Probe(track_id, phase, self.clock(), time.monotonic())
        self.probes.append(probe)
        self._pending.append(probe)
        self.producer.send(self.topic, key=str(track_id).encode(), value=json.dumps(event).encode())

    def _check(self, pending):
        ids = ",".join(str(p.track_id) for p in pending[:1000])
        try:
            answer = self.client.json(f"/v1/plays?track_id={ids}")
        except Exception:
            return
        seen = time.monotonic()
        visible = {t["track_id"] for t in answer.get("tracks", []) if t.get("plays", 0) >= 1}
        for probe in pending:
            if probe.track_id in visible:
                probe.latency_ms = (seen - probe.sent_mono) * 1000.0
