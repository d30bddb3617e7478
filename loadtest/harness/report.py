"""report.md: what ran, where it saturated, a table per step, the charts."""

import os

import analysis
import dashboard
import faults


def _n(value, digits=0):
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def _ms(value):
    if value is None:
        return "–"
    return f"{value:,.1f}" if value < 10 else f"{value:,.0f}"


def _us_ms(value):
    return "–" if value is None else _ms(value / 1000)


def _yes(value):
    return {True: "yes", False: "**no**", None: "–"}[value]


def _step_for_rate(figures, rate):
    return next((f for f in figures if f["target_rate"] == rate and not f["incident"]), None)


def _saturation_sentence(figures):
    best, first_unbounded = analysis.saturation(figures)
    realtime_best, realtime_first_unbounded = analysis.saturation(figures, "realtime_bounded")
    if best is None:
        text = "**Saturation point:** below the first step: no step kept both consumer groups' lag bounded."
    elif first_unbounded is None:
        return (f"**Saturation point:** not reached. Both consumer groups (realtime counts and archiver) kept their "
                f"lag bounded at every step, up to **{_n(best['produced_per_second'])} events/s** ({best['label']}), "
                "the fastest the replay produced; the producer side was the limit.")
    else:
        which = [name for name, key in (("realtime consumer", "realtime_bounded"), ("archiver", "archive_bounded"))
                 if first_unbounded[key] is False]
        text = (f"**Saturation point:** **{_n(best['produced_per_second'])} events/s** ({best['label']}) is the "
                "highest rate at which both consumer groups (realtime counts and archiver) kept their lag bounded "
                f"with dashboard traffic running; at {_n(first_unbounded['produced_per_second'])} events/s "
                f"({first_unbounded['label']}) the {' and the '.join(which) or 'probes'} did not.")
    if realtime_best is not None and realtime_best is not best:
        text += (f" The realtime consumer alone kept up to {_n(realtime_best['produced_per_second'])} events/s "
                 f"({realtime_best['label']})"
                 + ("" if realtime_first_unbounded is not None else ", the fastest the replay produced")
                 + ": dashboards stay fresh past the saturation point while the archive falls behind.")
    return text


def _freshness_sentence(figures, flush_interval_ms):
    at50 = _step_for_rate(figures, 50_000)
    if at50 is None:
        return None
    target = flush_interval_ms + 100
    p99 = at50["freshness"]["p99_ms"]
    verdict = "met" if p99 is not None and p99 <= target else "**missed**"
    return (f"**Freshness at 50k events/s:** p50 {_ms(at50['freshness']['p50_ms'])} ms, p99 "
            f"{_ms(p99)} ms against a target of {target} ms (flush interval "
            f"{flush_interval_ms} ms + 100 ms): {verdict}.")


def headline(figures, args):
    """The report's two key figures, for the terminal."""
    sentences = [_saturation_sentence(figures), _freshness_sentence(figures, args.flush_interval_ms)]
    return "\n".join("loadtest: " + s.replace("**", "") for s in sentences if s)


def _summary(figures, context):
    args = context["args"]
    lines = ["- " + _saturation_sentence(figures)]
    freshness = _freshness_sentence(figures, args["flush_interval_ms"])
    if freshness:
        lines.append("- " + freshness)
    incident = next((f for f in figures if f["incident"]), None)
    if incident is not None:
        base = _step_for_rate(figures, incident["target_rate"])
        batch = incident.get("batch") or {}
        text = (f"- **Batch rebuild under load ({incident['label']}):** rebuilt {_n(batch.get('hours'))} closed hours "
                f"({_n(batch.get('events_read'))} events) in {_n(batch.get('seconds'), 1)} s")
        if batch.get("failed"):
            text += f" — the batch failed: `{batch['failed']}`"
        if base is not None:
            text += (f". Against the same rate without it: counted {_n(incident['counted_per_second'])} vs "
                     f"{_n(base['counted_per_second'])} events/s, HTTP {_n(incident['http_requests_per_second'])} vs "
                     f"{_n(base['http_requests_per_second'])} req/s, totals p99 "
                     f"{_us_ms(_latency(incident, 'totals', 'p99'))} vs {_us_ms(_latency(base, 'totals', 'p99'))} ms, "
                     f"freshness p99 {_ms(incident['freshness']['p99_ms'])} vs {_ms(base['freshness']['p99_ms'])} ms")
        lines.append(text + ".")
    archiver_ok = [f for f in figures if f["archived_per_second"] and f["produced_per_second"]
                   and f["archived_per_second"] >= analysis.KEEP_UP_SHARE * f["produced_per_second"]
                   and (f["archive_lag_end"] or 0) <= analysis.LAG_END_SECONDS * f["produced_per_second"]
                   and not f["archive_lost_events"]]
    archive_lost = sum(f["archive_lost_events"] or 0 for f in figures)
    if archiver_ok:
        fastest = max(archiver_ok, key=lambda f: f["produced_per_second"])
        text = (f"- **Archiver:** kept up (same test as the consumer lag, without the probes) up to "
                f"{_n(fastest['produced_per_second'])} events/s ({fastest['label']})")
    else:
        text = "- **Archiver:** fell behind at every step"
    if archive_lost:
        text += (f"; {_n(archive_lost)} events were deleted by the broker before the archiver read them, so the "
                 "event logs lack them and a batch rebuild of their hours would count them out")
    lines.append(text + ".")
    lost = sum(f["lost_events"] or 0 for f in figures)
    errors = sum(f["http_errors"] for f in figures)
    text = (f"- **Errors:** {_n(errors)} HTTP errors; offset gaps (events the broker deleted before a consumer "
            f"read them): {_n(lost)} for the realtime consumer, {_n(archive_lost)} for the archiver")
    if (lost or archive_lost) and not args.get("brokers"):
        text += (" — the embedded broker (librdkafka's mock cluster) keeps only about 5 MiB per partition, so a "
                 "consumer more than a few seconds behind on a hot partition finds its next events deleted. Both "
                 "consumers report the gap; a real Kafka retains days")
    lines.append(text + ".")
    return "\n".join(lines)


def _latency(figure, kind, quantile):
    return figure["http"].get(kind, {}).get("latency_us", {}).get(quantile)


def _overview(figures):
    rows = ["| step | target ev/s | produced ev/s | counted ev/s | archived ev/s | lag at end | lag max | "
            "lost to gaps (realtime / archiver) | lag bounded (realtime / archiver) | freshness p50 / p99 ms | HTTP req/s | HTTP errors |",
            "|---|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|"]
    for f in figures:
        target = "max" if not f["target_rate"] else _n(f["target_rate"])
        fresh = f["freshness"]
        rows.append(f"| {f['label']} | {target} | {_n(f['produced_per_second'])} | {_n(f['counted_per_second'])} | "
                    f"{_n(f['archived_per_second'])} | {_n(f['lag_end'])} | {_n(f['lag_max'])} | "
                    f"{_n(f['lost_events'])} / {_n(f['archive_lost_events'])} | "
                    f"{_yes(f['realtime_bounded'])} / {_yes(f['archive_bounded'])} | {_ms(fresh['p50_ms'])} / {_ms(fresh['p99_ms'])} | "
                    f"{_n(f['http_requests_per_second'])} | {_n(f['http_errors'])} |")
    return "\n".join(rows)


def _step_section(number, f, args):
    fresh, replay = f["freshness"], f["replay"]
    lines = [f"### Step {number}: {f['label']}" + (" (batch rebuild running)" if f["incident"] else ""), ""]
    facts = [f"held {f['seconds']:.0f} s",
             f"replay achieved {_n(replay.get('events_per_second'))} events/s"
             + ("" if not f["target_rate"] else f" (target reached: {_yes(f['target_reached'])})"),
             f"delivery p99 {_ms(replay.get('delivery_p99_ms'))} ms, {_n(replay.get('delivery_errors'))} delivery errors",
             f"lag grew {_n(f['lag_growth_per_second'])} events/s over the hold",
             f"archiver lag at end {_n(f['archive_lag_end'])} (max {_n(f['archive_lag_max'])}), "
             f"{_n(f['archive_lost_events'])} events lost to the archive",
             f"{_n(f['lost_events'])} events lost to offset gaps",
             f"freshness {fresh['probes']} probes, max {_ms(fresh['max_ms'])} ms, {fresh['not_visible']} never visible",
             f"both consumer groups caught up {_n(f['drain_seconds'], 1)} s after the step"]
    if f.get("batch"):
        b = f["batch"]
        facts.append(f"batch rebuild: {_n(b.get('hours'))} hours, {_n(b.get('events_read'))} events, "
                     f"{_n(b.get('seconds'), 1)} s, {_n(b.get('events_per_second'))} events/s"
                     + (f", failed: `{b['failed']}`" if b.get("failed") else ""))
    lines.append("; ".join(facts) + ".")
    lines += ["", "| request kind | req/s | p50 ms | p99 ms | p99.9 ms | max ms | errors |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, _ in dashboard.MIX:
        r = f["http"].get(kind)
        if r is None:
            continue
        if "failed" in r:
            lines.append(f"| {kind} | wrk failed: {r['failed']} | | | | | |")
            continue
        latency = r["latency_us"]
        lines.append(f"| {kind} | {_n(r['requests_per_second'])} | {_us_ms(latency['p50'])} | "
                     f"{_us_ms(latency['p99'])} | {_us_ms(latency['p999'])} | {_us_ms(latency['max'])} | "
                     f"{_n(r['error_total'])} |")
    lines += ["", "| process | CPU (% of a core, mean) | resident memory (MiB, max) |", "|---|---:|---:|"]
    for label in sorted(f["cpu_percent"]):
        lines.append(f"| {label} | {_n(f['cpu_percent'][label])} | {_n(f['rss_mib_max'].get(label), 1)} |")
    threads = f["service_threads_cpu_percent"]
    if threads:
        split = ", ".join(f"{group} {_n(cpu)} %" for group, cpu in sorted(threads.items(), key=lambda kv: -kv[1]))
        lines += ["", f"Inside `counterpoint run`, by thread: {split}."]
    return "\n".join(lines)


def write(out, figures, context):
    args, m, generated = context["args"], context["machine"], context["generated"]
    broker = f"the Kafka at `{args['brokers']}`" if args.get("brokers") else \
        f"the embedded broker (librdkafka mock cluster, {args['partitions']} partitions)"
    store = f"PostgreSQL at `{args['store']}`" if args.get("store") else "SQLite files in the scratch folder"
    text = [
        f"# Counterpoint load test — {context['started']}",
        "",
        ("**Interrupted:** the run was stopped early; only the finished steps are reported.\n"
         if context["interrupted"] else "") +
        f"**Machine:** {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, Linux {m['kernel']}, Debian "
        f"{m['debian']}; {m['swift']}; librdkafka {m['librdkafka']}, libmicrohttpd {m['libmicrohttpd']}, "
        f"SQLite {m['sqlite']}, {m['wrk']}. Everything (service, broker, replay, wrk, probes) ran on this "
        "machine, over loopback.",
        "",
        f"**Setup:** `counterpoint run` (consumer, archiver, reader; flush interval {args['flush_interval_ms']} ms) "
        f"on {broker}; stores: {store}. Event logs: {_n(generated['events'])} generated events ({_n(generated['bytes'] / 1e6)} MB, "
        f"{generated['hours']} hours, {_n(generated['tracks'])} tracks played, Zipf popularity), replayed in a loop "
        f"by `counterpoint replay` at each step's rate. Each step: {args['warmup_seconds']:g} s warm-up, then "
        f"{args['step_seconds']:g} s measured; between steps the consumer may catch up for up to "
        f"{args['drain_seconds']:g} s. Dashboard traffic during every measured hold: about "
        f"{_n(args['http_rate'])} requests/s from wrk, {args['http_connections']} keep-alive connections per "
        "request kind (" + ", ".join(f"{kind} {share:.0%}" for kind, share in dashboard.MIX) +
        "), track ids drawn from the replayed events, so with their popularity skew. Freshness: "
        f"{args['probes_per_second']:g} probe events/s produced with kafka-python, polled over HTTP every 5 ms.",
        "",
        "## Summary",
        "",
        _summary(figures, context),
        "",
        "A consumer group's lag is *bounded* over a step's measured hold when it consumed at least "
        f"{analysis.KEEP_UP_SHARE:.0%} of the events produced, its lag grew by less than "
        f"{analysis.LAG_GROWTH_SHARE:.0%} of the produce rate per second and ended below "
        f"{analysis.LAG_END_SECONDS:g} s of traffic, and no event was lost to an offset gap; for the realtime "
        "consumer, every freshness probe must also have become visible. The saturation point needs both groups.",
        "",
        faults.section(context.get("faults"), args.get("faults")),
        "## Steps",
        "",
        _overview(figures),
        "",
        "## Charts",
        "",
        "Shaded bands are the measured holds of the steps; the red band is the step with the batch rebuild, "
        "the dashed red lines its start and end.",
        "",
        "![Events per second over time](throughput.svg)",
        "",
        "![Consumer lag over time](lag.svg)",
        "",
        "![Freshness of every probe](freshness.svg)",
        "",
        "![HTTP latency by step and request kind](latency.svg)",
        "",
        "![CPU and memory per process](resources.svg)",
        "",
        "## Each step",
        "",
    ]
    for number, f in enumerate(figures, 1):
        text += [_step_section(number, f, args), ""]
    text += [
        "## How it was measured",
        "",
        "- *Produced*, *counted* and *lag* come from the service's own `GET /v1/status`, sampled every second: "
        "the sum of the partitions' high watermarks, the sum of the offsets the realtime consumer committed with "
        "its counts, and its lag. *Archived* is the archiver's event count; its lag is produced minus archived "
        "minus what it skipped over offset gaps.",
        "- HTTP figures are wrk's, one wrk process per request kind, each pacing its connections with random "
        "pauses; latency is from sending a request to its whole answer.",
        "- Freshness probes are sent at random intervals (0.5–1.5 × the mean), so they land anywhere in the "
        "realtime layer's flush cycle; a probe's time includes kafka-python's send, the wait for the next flush, "
        "the flush itself and up to 5 ms of polling.",
        "- CPU and memory are read from `/proc` every second for every process the load test started.",
        f"- Raw data: `data/` (`samples.json` every second, `probes.json`, every figure in `figures.json`, the "
        "charts' data and gnuplot scripts). Processes' output: "
        "`processes/`.",
        f"- Sampler errors (a status request that failed or timed out): {context['sampler_errors']}.",
        "",
    ]
    path = os.path.join(out, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(text))
    return path
