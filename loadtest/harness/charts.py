"""Charts as SVG files drawn by gnuplot (Debian's gnuplot-nox). The data and the gnuplot
scripts stay beside them in data/, so anyone can redraw or restyle a chart."""

import os
import subprocess

import analysis
import dashboard

SIZE = "size 960,420 dynamic font 'sans,12' background rgb 'white'"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


def _write(path, rows):
    with open(path, "w") as f:
        for row in rows:
            f.write("\t".join("NaN" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))
                              for v in row) + "\n")


def _step_shading(steps):
    """gnuplot lines that shade each step's hold window (the batch rebuild in red) and name it."""
    lines = []
    for number, step in enumerate(steps, 1):
        colour = "#fbe3e3" if step.get("incident") else ("#eef3fa" if number % 2 else "#f6f6f6")
        lines.append(f"set object {number} rect from {step['hold_start']:.2f}, graph 0 to "
                     f"{step['hold_end']:.2f}, graph 1 behind fillcolor rgb '{colour}' fillstyle solid noborder")
        lines.append(f"set label {number} '{step['label']}' at {(step['hold_start'] + step['hold_end']) / 2:.2f}, "
                     f"graph 0.96 center font ',10'")
        batch = step.get("batch")
        if batch and "end" in batch:
            lines.append(f"set arrow from {batch['start']:.2f}, graph 0 to {batch['start']:.2f}, graph 1 nohead "
                         f"lc rgb '#d62728' dt 2")
            lines.append(f"set arrow from {batch['end']:.2f}, graph 0 to {batch['end']:.2f}, graph 1 nohead "
                         f"lc rgb '#d62728' dt 2")
    return "\n".join(lines)


def _run_gnuplot(out, name, script):
    data = os.path.join(out, "data")
    path = os.path.join(data, f"{name}.gp")
    with open(path, "w") as f:
        f.write(f"set terminal svg {SIZE}\nset output '{os.path.join(out, name + '.svg')}'\n")
        f.write(f"cd '{data}'\nset datafile separator tab\n{script}\n")
    subprocess.run(["gnuplot", path], check=True, capture_output=True, text=True)


def draw(out, samples, probes, figures, steps, args):
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    shading = _step_shading(steps)

    _write(os.path.join(data, "stream.tsv"), analysis.per_second_series(samples))
    _run_gnuplot(out, "throughput", f"""
set title 'Events per second: produced (replay), counted (realtime consumer), archived'
set xlabel 'seconds since start'; set ylabel 'events/s'; set grid; set key outside bottom center horizontal
set format y '%.0s%c'
{shading}
plot 'stream.tsv' using 1:2 with lines lw 2 lc rgb '{PALETTE[0]}' title 'produced', \\
     '' using 1:3 with lines lw 2 lc rgb '{PALETTE[2]}' title 'counted (realtime)', \\
     '' using 1:4 with lines lw 1 lc rgb '{PALETTE[4]}' dt 2 title 'archived'
""")
    _run_gnuplot(out, "lag", f"""
set title 'Consumer lag (events behind the broker); dashed red lines: batch rebuild'
set xlabel 'seconds since start'; set ylabel 'events'; set grid; set key outside bottom center horizontal
set logscale y; set yrange [1:*]; set format y '10^{{%T}}'
{shading}
plot 'stream.tsv' using 1:($5 < 1 ? 1 : $5) with lines lw 2 lc rgb '{PALETTE[1]}' title 'realtime consumer lag', \\
     '' using 1:($6 < 1 ? 1 : $6) with lines lw 1 lc rgb '{PALETTE[4]}' dt 2 title 'archiver lag'
""")

    probe_rows = [(p.sent_at, p.latency_ms) for p in probes if p.latency_ms is not None]
    _write(os.path.join(data, "probes.tsv"), probe_rows or [(0, None)])
    target = args.flush_interval_ms + 100
    _run_gnuplot(out, "freshness", f"""
set title 'Freshness: produce → visible over HTTP, one point per probe (target {target} ms dashed)'
set xlabel 'seconds since start'; set ylabel 'milliseconds'; set grid; set key outside bottom center horizontal
set logscale y
{shading}
set arrow from graph 0, first {target} to graph 1, first {target} nohead lc rgb '#d62728' dt 2 lw 2
plot 'probes.tsv' using 1:2 with points pt 7 ps 0.4 lc rgb '{PALETTE[0]}' title 'probe'
""")

    kinds = [kind for kind, _ in dashboard.MIX]
    rows = []
    for number, figure in enumerate(figures):
        row = [number, figure["label"]]
        for kind in kinds:
            result = figure["http"].get(kind, {})
            latency = result.get("latency_us", {})
            row += [latency.get(q, 0) / 1000 if latency.get(q) else None for q in ("p50", "p99", "p999")]
        rows.append(row)
    _write(os.path.join(data, "latency.tsv"), rows)
    panels = []
    for offset, (quantile, title) in enumerate((("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"))):
        series = ", \\\n     ".join(
            f"'latency.tsv' using 1:{3 + 3 * index + offset}:xticlabels(2) with linespoints lw 2 pt 7 "
            f"lc rgb '{PALETTE[index]}' title '{kind}'" for index, kind in enumerate(kinds))
        panels.append(f"set title 'HTTP latency {title} by step'\nplot {series}")
    _run_gnuplot(out, "latency", f"""
set terminal svg size 1200,420 dynamic font 'sans,11' background rgb 'white'
set output '{os.path.join(out, 'latency.svg')}'
set multiplot layout 1,3
set ylabel 'milliseconds'; set grid; set logscale y; set key top left font ',9'; set xtics rotate by -30
set offsets 0.3, 0.3, 0, 0
""" + "\n".join(panels) + "\nunset multiplot")

    labels = sorted({label for s in samples for label in s["cpu"]})
    _write(os.path.join(data, "resources.tsv"),
           [[s["t"]] + [s["cpu"].get(l) for l in labels] + [s["rss_mib"].get(l) for l in labels] for s in samples])
    cpu = ", \\\n     ".join(f"'resources.tsv' using 1:{2 + i} with lines lw 2 lc rgb '{PALETTE[i % len(PALETTE)]}' "
                            f"title '{label}'" for i, label in enumerate(labels))
    rss = ", \\\n     ".join(f"'resources.tsv' using 1:{2 + len(labels) + i} with lines lw 2 "
                            f"lc rgb '{PALETTE[i % len(PALETTE)]}' title '{label}'" for i, label in enumerate(labels))
    _run_gnuplot(out, "resources", f"""
set terminal svg size 960,640 dynamic font 'sans,11' background rgb 'white'
set output '{os.path.join(out, 'resources.svg')}'
set multiplot layout 2,1
set grid; set key outside right font ',9'; set xlabel 'seconds since start'
{shading}
set title 'CPU per process (100 % = one core)'; set ylabel '% of a core'
plot {cpu}
set title 'Resident memory per process'; set ylabel 'MiB'
plot {rss}
unset multiplot
""")
