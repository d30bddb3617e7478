// MARK: the timeline chart
const chart = { sel: null, points: [], step: 'hour', x0: 0, bw: 1, signal: 'plays' };
function tickStep(v) {
  const raw = Math.max(1, v / 4);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw && Number.isInteger(m * p)) return m * p;
  return 10 * p;
}
function bucketLabel(start, step) {
  const d = new Date(start);
  if (step === 'day') return `${dateText(d)} (UTC day)`;
  return `${dateText(d)} ${pad(d.getUTCHours())}:00–${pad((d.getUTCHours() + 1) % 24)}:00 UTC`;
}
function tickLabel(ms, step) {
  const d = new Date(ms);
  const day = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
  if (step === 'day' || d.getUTCHours() === 0) return day;
  return `${pad(d.getUTCHours())}:00`;
}
function renderTimeline(r, step, forced) {
  if (r.status !== 200) {
    timelineBody = null;
    fit($('chart-marks'), 0); fit($('chart-band'), 0);
    setText($('timeline-note'), '');
    setText($('chart-readout'), (r.body && r.body.error && r.body.error.message) || `The reader answered ${r.status}.`);
    return;
  }
  timelineBody = { body: r.body, step, forced };
  drawTimeline();
}
function drawTimeline() {
  if (!timelineBody) return;
  const { body, step, forced } = timelineBody;
  const points = body.points || [];
  const svg = $('chart');
  const W = Math.max(200, svg.clientWidth || 800), H = Math.max(120, svg.clientHeight || 240);
  const padL = 52, padR = 6, padT = 8, bandH = 5, axisH = 18;
  const plotH = H - padT - bandH - 3 - axisH;
  setAttrs(svg, { viewBox: `0 0 ${W} ${H}` });
  // The answer names its signal (plays when it does not); each point's count is under that name.
  // A net count can be negative: the scale then reaches below a zero line.
  const signal = body.signal || 'plays';
  const count = (p) => p[signal] || 0;
  let max = 0, min = 0, total = 0, peak = -1;
  for (let i = 0; i < points.length; i++) {
    const v = count(points[i]);
    total += v;
    if (v > max) { max = v; peak = i; }
    if (v < min) min = v;
  }
  const stepY = tickStep(Math.max(max, -min, max - min));
  const top = max > 0 || min === 0 ? Math.max(stepY, Math.ceil(max / stepY) * stepY) : 0;
  const bottom = min < 0 ? -Math.ceil(-min / stepY) * stepY : 0;
  const yOf = (v) => padT + plotH - ((v - bottom) / (top - bottom)) * plotH;
  const n = points.length, bw = (W - padL - padR) / Math.max(1, n);
  const gap = bw >= 5 ? Math.min(2, bw * 0.18) : 0;
  chart.points = points; chart.step = step; chart.x0 = padL; chart.bw = bw; chart.signal = signal;

  const grid = $('chart-grid');
  grid.replaceChildren();
  setAttrs(grid, { class: 'grid' });
  for (let v = bottom; v <= top; v += stepY) {
    const y = yOf(v);
    grid.appendChild(svgEl('line', { x1: padL, x2: W - padR, y1: y, y2: y }));
    grid.appendChild(svgEl('text', { x: padL - 6, y: y + 4, 'text-anchor': 'end' }, fmt(v)));
  }
  const marks = fit($('chart-marks'), n, () => svgEl('rect', {}));
  const band = fit($('chart-band'), n, () => svgEl('rect', {}));
  for (let i = 0; i < n; i++) {
    const p = points[i], x = padL + i * bw, v = count(p);
    const src = SOURCES[p.source] ? p.source : 'batch';
    setAttrs(marks[i], { class: `mark m-${src}`, x: x + gap / 2, y: yOf(Math.max(v, 0)), width: Math.max(0.6, bw - gap),
      height: yOf(Math.min(v, 0)) - yOf(Math.max(v, 0)), 'data-start': p.start, 'data-count': v, 'data-source': src });
    setAttrs(band[i], { class: `b-${src}`, x, y: padT + plotH + 3, width: bw + 0.3, height: bandH });
  }
  const axis = $('chart-axis');
  axis.replaceChildren();
  setAttrs(axis, { class: 'axis' });
  const every = Math.max(1, Math.ceil(n / Math.max(1, Math.floor((W - padL) / 72))));
  const unit = step === 'day' ? 24 : 1;
  const nice = step === 'day' ? [1, 2, 7, 14, 28, 56, 91, 182, 364] : [1, 2, 3, 6, 12, 24, 48, 72, 168, 336, 720];
  const k = nice.find((m) => m >= every) || every;
  for (let i = 0; i < n; i++) {
    const ms = Date.parse(points[i].start);
    const index = Math.round(ms / HOUR / unit);
    if (step === 'hour' && k >= 24 ? (new Date(ms).getUTCHours() === 0 && (index / 24) % (k / 24) === 0) : index % k === 0) {
      axis.appendChild(svgEl('text', { x: padL + (i + 0.5) * bw, y: H - 4, 'text-anchor': 'middle' }, tickLabel(ms, step)));
    }
  }
  const what = step === 'day' ? 'day' : 'hour';
  setText($('timeline-note'), `${fmt(n)} ${what} buckets, ${fmt(total)} ${signal}${forced ? ' · hourly steps hold at most 10,000 buckets, so days are shown' : ''}`);
  setText($('timeline-title'), signal === 'plays' ? 'Timeline' : `Timeline of ${signal}`);
  setAttrs(svg, { 'aria-label': `${signal[0].toUpperCase() + signal.slice(1)} per bucket. Use the left and right arrow keys to read each bucket.` });
  chart.peak = peak;
  if (chart.sel !== null && chart.sel >= n) chart.sel = n ? n - 1 : null;
  showChartSelection();
}
function showChartSelection() {
  const c = $('chart-cursor');
  const points = chart.points;
  if (chart.sel === null || !points.length) {
    setAttrs(c, { width: 0, height: 0 });
    if (!points.length) { setText($('chart-readout'), 'No buckets in this period.'); return; }
    const p = points[Math.max(0, chart.peak)], v = p[chart.signal] || 0;
    setText($('chart-readout'), chart.peak >= 0 && v > 0
      ? `Busiest: ${bucketLabel(p.start, chart.step)} — ${fmt(v)} ${chart.signal}, from ${SOURCES[p.source] || p.source}. Hover, or focus and use the arrow keys, for any bucket.`
      : `No ${chart.signal} in this period.`);
    return;
  }
  const p = points[chart.sel];
  const svg = $('chart');
  setAttrs(c, { x: chart.x0 + chart.sel * chart.bw, y: 2, width: Math.max(1, chart.bw), height: Math.max(0, (svg.clientHeight || 240) - 20) });
  setText($('chart-readout'), `${bucketLabel(p.start, chart.step)}: ${fmt(p[chart.signal] || 0)} ${chart.signal}, from ${SOURCES[p.source] || p.source}`);
}
function pointerIndex(svg, e, x0, bw, n) {
  const box = svg.getBoundingClientRect();
  const i = Math.floor((e.clientX - box.left - x0) / bw);
  return i >= 0 && i < n ? i : null;
}
function keyMove(e, sel, n) {
  const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10 };
  if (!n) return null;
  if (e.key === 'Home') return 0;
  if (e.key === 'End') return n - 1;
  if (!(e.key in moves)) return undefined;
  return Math.min(n - 1, Math.max(0, (sel === null ? n - 1 : sel + moves[e.key])));
}
// Selecting one bar of a chart with the pointer or the keyboard: `model.sel` is the selected
// bar (null for none) of `count()`; `under(e)` is the bar under the pointer; focus selects
// `first()`; `show()` draws the selection.
function selectable(svg, model, { count, under, first, show }) {
  svg.addEventListener('pointermove', (e) => { model.sel = under(e); show(); });
  svg.addEventListener('pointerleave', () => { if (document.activeElement !== svg) { model.sel = null; show(); } });
  svg.addEventListener('focus', () => { if (model.sel === null && count()) { model.sel = first(); show(); } });
  svg.addEventListener('blur', () => { model.sel = null; show(); });
  svg.addEventListener('keydown', (e) => {
    const next = keyMove(e, model.sel, count());
    if (next === undefined) return;
    e.preventDefault();
    model.sel = next; show();
  });
}
selectable($('chart'), chart, {
  count: () => chart.points.length,
  under: (e) => pointerIndex($('chart'), e, chart.x0, chart.bw, chart.points.length),
  first: () => chart.points.length - 1,
  show: showChartSelection,
});

// MARK: the waveform heatmaps
const notAvailable = (what) => `Not available: this reader does not answer ${what} yet.`;
// A track's waveform of one signal (`plays`: where plays start; `comments`: where comments sit,
// a net count that deletions can take below zero) in the SVG `id`, with its note and readout.
function heatmap(id, noteId, signal, where) {
  const svg = $(id), cells = $(id + '-cells'), cursor = $(id + '-cursor'), readout = $(id + '-readout'), note = $(noteId);
  const model = { sel: null, buckets: [], step: 1, body: null };
  function show() {
    if (model.sel === null || !model.buckets.length) {
      setAttrs(cursor, { width: 0, height: 0 });
      if (!model.buckets.length) return;
      let peak = 0;
      model.buckets.forEach((v, i) => { if (v > model.buckets[peak]) peak = i; });
      setText(readout, model.buckets[peak] > 0
        ? `Most ${signal} ${where} ${peak}–${peak + 1} % into the track: ${fmt(model.buckets[peak])}. Hover, or focus and use the arrow keys, for any bucket.`
        : `No ${signal} with a position in this period.`);
      return;
    }
    const i = model.sel;
    setAttrs(cursor, { x: i * model.step, y: 0.5, width: model.step, height: Math.max(0, (svg.clientHeight || 56) - 1) });
    setText(readout, `${i}–${i + 1} % into the track: ${fmt(model.buckets[i])} ${signal} ${where} here`);
  }
  function draw() {
    const b = model.body;
    if (!b) return;
    const buckets = b.buckets, n = buckets.length;
    const W = Math.max(100, svg.clientWidth || 800), H = Math.max(20, svg.clientHeight || 56);
    setAttrs(svg, { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none' });
    let max = 0;
    for (const v of buckets) if (v > max) max = v;
    const cw = W / Math.max(1, n);
    model.buckets = buckets; model.step = cw;
    const rects = fit(cells, n, () => svgEl('rect', {}));
    for (let i = 0; i < n; i++) {
      const v = buckets[i];
      setAttrs(rects[i], { class: 'cell', x: i * cw, y: 0, width: cw + 0.4, height: H,
        'fill-opacity': max ? (0.06 + 0.94 * (Math.max(0, v) / max)).toFixed(3) : 0.06, 'data-bucket': i, [`data-${signal}`]: v });
    }
    setText(note, `${fmt(b[signal])} ${signal} · ${fmt(b[signal + '_without_position'])} without a position`);
    show();
  }
  function clear(text) {
    model.body = null; model.buckets = [];
    fit(cells, 0);
    setAttrs(cursor, { width: 0, height: 0 });
    setText(readout, text);
  }
  function render(r) {
    if (r.status !== 200 || !Array.isArray(r.body.buckets)) {
      clear(r.status === 404 ? notAvailable('/v1/tracks/{id}/waveform') : `The reader answered ${r.status}.`);
      setText(note, 'not available');
      readout.classList.add('unavailable');
      return;
    }
    readout.classList.remove('unavailable');
    model.body = r.body;
    draw();
  }
  selectable(svg, model, {
    count: () => model.buckets.length,
    under: (e) => pointerIndex(svg, e, 0, model.step, model.buckets.length),
    first: () => 0,
    show,
  });
  return { render, draw, clear };
}
const heatmaps = {
  plays: heatmap('heat', 'waveform-note', 'plays', 'start'),
  comments: heatmap('comment-heat', 'comment-heat-note', 'comments', 'sit'),
};
