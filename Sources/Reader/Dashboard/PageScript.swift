/// The stats page's one script: reads the JSON API of SPEC §5 every few seconds and writes the
/// answers into the fixed elements of `PageMarkup`. State lives in the fragment
/// (`#track=123&range=7d&step=day`); a failed request leaves the last good numbers in place
/// and says so in the notice.
enum PageScript {
    static let js = #"""
    (() => {
    'use strict';
    const $ = (id) => document.getElementById(id);
    const SVG = 'http://www.w3.org/2000/svg';
    const HOUR = 3600000, DAY = 24 * HOUR, REFRESH_MS = 5000, MAX_ID = 9007199254740991, MAX_POINTS = 10000;
    const RANGES = {
      '48h': { hours: 48, label: 'in the last 48 hours', step: 'hour' },
      '7d': { hours: 168, label: 'in the last 7 days', step: 'hour' },
      '30d': { hours: 720, label: 'in the last 30 days', step: 'day' },
      'all': { hours: 0, label: 'of all time', step: 'day' },
    };
    const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const SOURCES = { batch: 'batch', realtime: 'realtime', mixed: 'batch and realtime' };
    const numberFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
    const fmt = (n) => (typeof n === 'number' && isFinite(n)) ? numberFormat.format(n) : '—';
    const pad = (n) => String(n).padStart(2, '0');
    const dateText = (d) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    function timeText(iso, seconds) {
      const d = new Date(iso);
      if (isNaN(d.getTime())) return '—';
      return `${dateText(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}${seconds ? ':' + pad(d.getUTCSeconds()) : ''} UTC`;
    }
    const clockText = (ms) => { const d = new Date(ms); return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`; };
    function ageText(iso) {
      const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
      if (s < 120) return `${s} s ago`;
      if (s < 7200) return `${Math.round(s / 60)} min ago`;
      if (s < 172800) return `${Math.round(s / 3600)} h ago`;
      return `${Math.round(s / 86400)} days ago`;
    }
    const isoHour = (ms) => new Date(ms).toISOString().slice(0, 13) + ':00:00Z';
    function setText(el, text) { if (el.textContent !== text) el.textContent = text; }
    function setAttrs(el, attrs) {
      for (const k in attrs) { const v = String(attrs[k]); if (el.getAttribute(k) !== v) el.setAttribute(k, v); }
    }
    function svgEl(tag, attrs, text) {
      const el = document.createElementNS(SVG, tag);
      setAttrs(el, attrs);
      if (text !== undefined) el.textContent = text;
      return el;
    }
    // Grows or shrinks `parent` to `count` children made by `make`, keeping the ones it has,
    // so that a refresh changes attributes and text in place instead of rebuilding.
    function fit(parent, count, make) {
      while (parent.children.length > count) parent.lastElementChild.remove();
      while (parent.children.length < count) parent.appendChild(make());
      return parent.children;
    }

    // MARK: state in the fragment
    function parseHash() {
      const text = location.hash.replace(/^#/, '');
      if (!text.includes('=')) return null;
      const p = new URLSearchParams(text);
      const s = { track: null, range: '7d', step: null };
      const t = p.get('track');
      if (t && /^[0-9]{1,16}$/.test(t) && +t >= 1 && +t <= MAX_ID) s.track = +t;
      const r = p.get('range');
      if (r && Object.prototype.hasOwnProperty.call(RANGES, r)) s.range = r;
      const st = p.get('step');
      s.step = (st === 'hour' || st === 'day') ? st : RANGES[s.range].step;
      return s;
    }
    const hashOf = (s) => '#' + (s.track ? `track=${s.track}&` : '') + `range=${s.range}&step=${s.step}`;
    let state = parseHash() || { track: null, range: '7d', step: 'hour' };

    function setState(patch) {
      const next = Object.assign({}, state, patch);
      if (patch.range && !patch.step) next.step = RANGES[next.range].step;
      const h = hashOf(next);
      state = next;
      syncControls();
      if (location.hash !== h) location.hash = h; else refreshSoon();
    }
    window.addEventListener('hashchange', () => {
      const s = parseHash();
      if (!s) return;
      state = s;
      syncControls();
      refreshSoon();
    });

    function syncControls() {
      for (const b of $('ranges').querySelectorAll('button')) setAttrs(b, { 'aria-pressed': b.dataset.range === state.range });
      for (const b of $('steps').querySelectorAll('button')) setAttrs(b, { 'aria-pressed': b.dataset.step === state.step });
      const input = $('track-input');
      if (document.activeElement !== input) input.value = state.track ? String(state.track) : '';
      setText($('range-label'), RANGES[state.range].label);
    }

    $('ranges').addEventListener('click', (e) => { const b = e.target.closest('button'); if (b) setState({ range: b.dataset.range }); });
    $('steps').addEventListener('click', (e) => { const b = e.target.closest('button'); if (b) setState({ step: b.dataset.step }); });
    $('pick').addEventListener('submit', (e) => {
      e.preventDefault();
      const input = $('track-input');
      const text = input.value.trim();
      const ok = /^[0-9]{1,16}$/.test(text) && +text >= 1 && +text <= MAX_ID;
      setAttrs(input, { 'aria-invalid': !ok });
      setText($('track-help'), ok ? '' : 'A track id is a whole number from 1 to 9,007,199,254,740,991.');
      if (ok) setState({ track: +text });
    });
    $('top-rows').addEventListener('click', (e) => {
      const b = e.target.closest('button[data-track]');
      if (b) setState({ track: +b.dataset.track });
    });
    document.querySelector('.skip').addEventListener('click', (e) => { e.preventDefault(); $('summary').focus(); });

    // MARK: requests
    async function get(path) {
      try {
        const res = await fetch(path, { cache: 'no-store', headers: { Accept: 'application/json' } });
        let body = null;
        try { body = await res.json(); } catch (_) { body = null; }
        return { path, status: res.status, body };
      } catch (_) {
        return { path, status: 0, body: null };
      }
    }
    const failed = (r) => r.status === 0 || r.status >= 500 || (r.status === 200 && !r.body);

    function rangeWindow(status) {
      const to = Math.floor(Date.now() / HOUR) * HOUR + HOUR;
      const r = RANGES[state.range];
      if (r.hours) {
        const from = to - r.hours * HOUR;
        return { from, to, query: `from=${isoHour(from)}&to=${isoHour(to)}` };
      }
      // All time: from the first hour the batch layer covers (or two days back when it
      // covers nothing yet) to the end of the current hour or of the coverage.
      let from = to - 48 * HOUR, end = to;
      const coverage = status && status.batch && status.batch.coverage;
      if (coverage && coverage.length) {
        for (const c of coverage) {
          const f = Date.parse(c.from), t = Date.parse(c.to);
          if (f < from) from = f;
          if (t > end) end = t;
        }
      }
      return { from, to: end, query: '' };
    }

    let generation = 0, timer = 0, lastGoodAt = 0, lastStatus = null, autoTrack = null;
    let timelineBody = null, heatBody = null, shownTrack = null;

    function refreshSoon() { clearTimeout(timer); timer = setTimeout(refresh, 0); }

    async function refresh() {
      const gen = ++generation;
      clearTimeout(timer);
      const failures = [];
      const track = (r) => { if (failed(r)) failures.push(r); return r; };
      const w0 = rangeWindow(lastStatus);
      const [status, top] = await Promise.all([
        get('/v1/status'),
        get('/v1/top?limit=10' + (w0.query ? '&' + w0.query : '')),
      ]).then((rs) => rs.map(track));
      if (gen !== generation) return;
      if (!failed(status)) { lastStatus = status.body; renderStatus(status.body); }
      if (!failed(top)) {
        const tracks = top.body.tracks || [];
        autoTrack = tracks.length ? tracks[0].track_id : null;
      }
      const id = state.track || autoTrack;
      if (!failed(top)) renderTop(top.body, id);
      if (id) {
        const w = rangeWindow(lastStatus);
        let step = state.step;
        let forced = false;
        if (step === 'hour' && (w.to - w.from) / HOUR > MAX_POINTS) { step = 'day'; forced = true; }
        const q = w.query ? '?' + w.query : '';
        const base = `/v1/tracks/${id}`;
        const [plays, timeline, waveform, countries, clients] = await Promise.all([
          get(`${base}/plays${q}`),
          get(`${base}/timeline?from=${isoHour(w.from)}&to=${isoHour(w.to)}&step=${step}`),
          get(`${base}/waveform${q}`),
          get(`${base}/breakdown?by=country${w.query ? '&' + w.query : ''}`),
          get(`${base}/breakdown?by=client${w.query ? '&' + w.query : ''}`),
        ]).then((rs) => rs.map(track));
        if (gen !== generation) return;
        if (!failed(plays)) renderSummary(id, plays);
        if (!failed(timeline)) renderTimeline(timeline, step, forced);
        if (!failed(waveform)) renderHeat(waveform);
        if (!failed(countries)) renderBreakdown('countries', countries);
        if (!failed(clients)) renderBreakdown('clients', clients);
        shownTrack = id;
      } else if (!failed(top)) {
        renderEmpty();
      }
      if (failures.length) showNotice(failures); else { lastGoodAt = Date.now(); hideNotice(); }
      setText($('updated'), lastGoodAt ? `Updated ${clockText(lastGoodAt)} · refreshes every ${REFRESH_MS / 1000} s` : 'Waiting for the reader…');
      timer = setTimeout(refresh, REFRESH_MS);
    }

    function showNotice(failures) {
      const f = failures[0];
      const what = f.status === 0 ? 'the reader cannot be reached' : `the reader answered ${f.status}`;
      const since = lastGoodAt ? `; the numbers shown are from ${clockText(lastGoodAt)}` : '';
      setText($('notice'), `Not updated: ${what} (${f.path.split('?')[0]})${since}. Retrying every ${REFRESH_MS / 1000} s.`);
      $('notice').classList.add('show');
    }
    function hideNotice() { $('notice').classList.remove('show'); setText($('notice'), ''); }

    // MARK: the track's total
    function freshnessText(f) {
      if (!f) return '—';
      const exact = f.batch_covered_until ? `exact until ${timeText(f.batch_covered_until)}` : 'no batch coverage yet';
      const fresh = f.realtime_flushed_at ? `fresh as of ${timeText(f.realtime_flushed_at, true)}` : 'no realtime flush yet';
      const lag = typeof f.realtime_lag_events === 'number' ? ` (consumer ${fmt(f.realtime_lag_events)} events behind)` : '';
      return `${exact}, ${fresh}${lag}`;
    }
    function renderSummary(id, r) {
      setText($('track-title'), `Track ${id}`);
      setText($('track-note'), state.track ? '' : '— the top track; type an id or pick one below');
      if (r.status !== 200) {
        setText($('total'), '—');
        setText($('freshness'), (r.body && r.body.error && r.body.error.message) || `the reader answered ${r.status}`);
        return;
      }
      const b = r.body;
      setText($('total'), fmt(b.plays));
      setText($('batch-plays'), fmt(b.batch_plays));
      setText($('realtime-plays'), fmt(b.realtime_plays));
      const sum = (b.batch_plays || 0) + (b.realtime_plays || 0);
      $('split-batch').style.width = sum ? `${(100 * b.batch_plays) / sum}%` : '0';
      $('split-realtime').style.width = sum ? `${(100 * b.realtime_plays) / sum}%` : '0';
      setText($('freshness'), freshnessText(b.freshness));
    }
    function renderEmpty() {
      setText($('track-title'), 'No plays yet');
      setText($('track-note'), '— nothing counted in this range; type a track id to look one up');
      for (const id of ['total', 'batch-plays', 'realtime-plays']) setText($(id), '0');
      setText($('freshness'), lastStatus ? freshnessText(lastStatus.freshness) : '—');
      timelineBody = null; heatBody = null;
      fit($('chart-marks'), 0); fit($('chart-band'), 0);
      fit($('heat-cells'), 0);
      setText($('chart-readout'), 'No track to show yet.');
      setText($('heat-readout'), 'No track to show yet.');
      for (const which of ['countries', 'clients']) fit($(which + '-list'), 0);
    }

    // MARK: the timeline chart
    const chart = { sel: null, points: [], step: 'hour', x0: 0, bw: 1 };
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
      let max = 0, total = 0, peak = -1;
      for (let i = 0; i < points.length; i++) { total += points[i].plays; if (points[i].plays > max) { max = points[i].plays; peak = i; } }
      const stepY = tickStep(max);
      const top = Math.max(stepY, Math.ceil(max / stepY) * stepY);
      const n = points.length, bw = (W - padL - padR) / Math.max(1, n);
      const gap = bw >= 5 ? Math.min(2, bw * 0.18) : 0;
      chart.points = points; chart.step = step; chart.x0 = padL; chart.bw = bw;

      const grid = $('chart-grid');
      grid.replaceChildren();
      setAttrs(grid, { class: 'grid' });
      for (let v = 0; v <= top; v += stepY) {
        const y = padT + plotH - (v / top) * plotH;
        grid.appendChild(svgEl('line', { x1: padL, x2: W - padR, y1: y, y2: y }));
        grid.appendChild(svgEl('text', { x: padL - 6, y: y + 4, 'text-anchor': 'end' }, fmt(v)));
      }
      const marks = fit($('chart-marks'), n, () => svgEl('rect', {}));
      const band = fit($('chart-band'), n, () => svgEl('rect', {}));
      for (let i = 0; i < n; i++) {
        const p = points[i], x = padL + i * bw, h = (p.plays / top) * plotH;
        const src = SOURCES[p.source] ? p.source : 'batch';
        setAttrs(marks[i], { class: `mark m-${src}`, x: x + gap / 2, y: padT + plotH - h, width: Math.max(0.6, bw - gap), height: h,
          'data-start': p.start, 'data-plays': p.plays, 'data-source': src });
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
      setText($('timeline-note'), `${fmt(n)} ${what} buckets, ${fmt(total)} plays${forced ? ' · hourly steps hold at most 10,000 buckets, so days are shown' : ''}`);
      chart.peak = peak;
      if (chart.sel !== null && chart.sel >= n) chart.sel = n ? n - 1 : null;
      showChartSelection();
    }
    function showChartSelection() {
      const c = $('chart-cursor');
      const points = chart.points;
      if (chart.sel === null || !points.length) {
        setAttrs(c, { width: 0, height: 0 });
        if (!points.length) { setText($('chart-readout'), 'No buckets in this range.'); return; }
        const p = points[Math.max(0, chart.peak)];
        setText($('chart-readout'), chart.peak >= 0 && p.plays > 0
          ? `Busiest: ${bucketLabel(p.start, chart.step)} — ${fmt(p.plays)} plays, from ${SOURCES[p.source] || p.source}. Hover, or focus and use the arrow keys, for any bucket.`
          : 'No plays in this range.');
        return;
      }
      const p = points[chart.sel];
      const svg = $('chart');
      setAttrs(c, { x: chart.x0 + chart.sel * chart.bw, y: 2, width: Math.max(1, chart.bw), height: Math.max(0, (svg.clientHeight || 240) - 20) });
      setText($('chart-readout'), `${bucketLabel(p.start, chart.step)}: ${fmt(p.plays)} plays, from ${SOURCES[p.source] || p.source}`);
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
    $('chart').addEventListener('pointermove', (e) => { chart.sel = pointerIndex($('chart'), e, chart.x0, chart.bw, chart.points.length); showChartSelection(); });
    $('chart').addEventListener('pointerleave', () => { if (document.activeElement !== $('chart')) { chart.sel = null; showChartSelection(); } });
    $('chart').addEventListener('focus', () => { if (chart.sel === null && chart.points.length) { chart.sel = chart.points.length - 1; showChartSelection(); } });
    $('chart').addEventListener('blur', () => { chart.sel = null; showChartSelection(); });
    $('chart').addEventListener('keydown', (e) => {
      const next = keyMove(e, chart.sel, chart.points.length);
      if (next === undefined) return;
      e.preventDefault();
      chart.sel = next; showChartSelection();
    });

    // MARK: the waveform heatmap
    const heat = { sel: null, buckets: [], step: 1 };
    const notAvailable = (what) => `Not available: this reader does not answer ${what} yet.`;
    function renderHeat(r) {
      if (r.status !== 200 || !Array.isArray(r.body.buckets)) {
        heatBody = null; heat.buckets = [];
        fit($('heat-cells'), 0);
        setAttrs($('heat-cursor'), { width: 0, height: 0 });
        setText($('waveform-note'), 'not available');
        setText($('heat-readout'), r.status === 404 ? notAvailable('/v1/tracks/{id}/waveform') : `The reader answered ${r.status}.`);
        $('heat-readout').classList.add('unavailable');
        return;
      }
      $('heat-readout').classList.remove('unavailable');
      heatBody = r.body;
      drawHeat();
    }
    function drawHeat() {
      if (!heatBody) return;
      const b = heatBody, buckets = b.buckets, n = buckets.length;
      const svg = $('heat');
      const W = Math.max(100, svg.clientWidth || 800), H = Math.max(20, svg.clientHeight || 56);
      setAttrs(svg, { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none' });
      let max = 0, placed = 0;
      for (const v of buckets) { placed += v; if (v > max) max = v; }
      const cw = W / Math.max(1, n);
      heat.buckets = buckets; heat.step = cw;
      const cells = fit($('heat-cells'), n, () => svgEl('rect', {}));
      for (let i = 0; i < n; i++) {
        const v = buckets[i];
        setAttrs(cells[i], { class: 'cell', x: i * cw, y: 0, width: cw + 0.4, height: H,
          'fill-opacity': max ? (0.06 + 0.94 * (v / max)).toFixed(3) : 0.06, 'data-bucket': i, 'data-plays': v });
      }
      setText($('waveform-note'), `${fmt(b.plays)} plays · ${fmt(b.plays_without_position)} without a position`);
      showHeatSelection();
    }
    function showHeatSelection() {
      const c = $('heat-cursor');
      if (heat.sel === null || !heat.buckets.length) {
        setAttrs(c, { width: 0, height: 0 });
        if (!heat.buckets.length) return;
        let peak = 0;
        heat.buckets.forEach((v, i) => { if (v > heat.buckets[peak]) peak = i; });
        setText($('heat-readout'), heat.buckets[peak] > 0
          ? `Most plays start ${peak}–${peak + 1} % into the track: ${fmt(heat.buckets[peak])}. Hover, or focus and use the arrow keys, for any bucket.`
          : 'No plays with a position in this range.');
        return;
      }
      const i = heat.sel;
      setAttrs(c, { x: i * heat.step, y: 0.5, width: heat.step, height: Math.max(0, ($('heat').clientHeight || 56) - 1) });
      setText($('heat-readout'), `${i}–${i + 1} % into the track: ${fmt(heat.buckets[i])} plays started here`);
    }
    $('heat').addEventListener('pointermove', (e) => { heat.sel = pointerIndex($('heat'), e, 0, heat.step, heat.buckets.length); showHeatSelection(); });
    $('heat').addEventListener('pointerleave', () => { if (document.activeElement !== $('heat')) { heat.sel = null; showHeatSelection(); } });
    $('heat').addEventListener('focus', () => { if (heat.sel === null && heat.buckets.length) { heat.sel = 0; showHeatSelection(); } });
    $('heat').addEventListener('blur', () => { heat.sel = null; showHeatSelection(); });
    $('heat').addEventListener('keydown', (e) => {
      const next = keyMove(e, heat.sel, heat.buckets.length);
      if (next === undefined) return;
      e.preventDefault();
      heat.sel = next; showHeatSelection();
    });

    // MARK: country and client breakdowns
    const SHOWN_VALUES = 7;
    function makeBarRow() {
      const li = document.createElement('li');
      const k = document.createElement('span'); k.className = 'k';
      const track = document.createElement('span'); track.className = 'track';
      const fill = document.createElement('span'); fill.className = 'fill'; track.appendChild(fill);
      const v = document.createElement('span'); v.className = 'v';
      v.appendChild(document.createTextNode(''));
      const pct = document.createElement('span'); pct.className = 'pct'; v.appendChild(pct);
      li.append(k, track, v);
      return li;
    }
    function renderBreakdown(which, r) {
      const list = $(which + '-list'), note = $(which + '-note');
      if (r.status !== 200 || !Array.isArray(r.body.values)) {
        const rows = fit(list, 1, makeBarRow);
        rows[0].className = 'more full unavailable';
        setText(rows[0].children[0], r.status === 404 ? notAvailable('/v1/tracks/{id}/breakdown') : `The reader answered ${r.status}.`);
        setText(rows[0].children[2].firstChild, ''); setText(rows[0].children[2].lastChild, '');
        rows[0].children[1].firstChild.style.width = '0';
        setText(note, 'not available');
        return;
      }
      const values = r.body.values;
      let sum = 0, max = 0;
      for (const v of values) { sum += v.plays; if (v.plays > max) max = v.plays; }
      const shown = values.length > SHOWN_VALUES + 1 ? values.slice(0, SHOWN_VALUES) : values;
      const rest = values.length - shown.length;
      const rows = fit(list, Math.max(1, shown.length + (rest ? 1 : 0)), makeBarRow);
      shown.forEach((v, i) => {
        const row = rows[i];
        row.className = '';
        const k = row.children[0];
        k.className = 'k';
        setText(k, v.value === null ? 'not sent' : String(v.value));
        k.title = v.value === null ? 'plays whose events did not carry this field' : String(v.value);
        row.children[1].firstChild.style.width = max ? `${(100 * v.plays) / max}%` : '0';
        setText(row.children[2].firstChild, fmt(v.plays));
        setText(row.children[2].lastChild, sum ? `${((100 * v.plays) / sum).toFixed(1)} %` : '');
      });
      if (rest) {
        let restPlays = 0;
        for (const v of values.slice(shown.length)) restPlays += v.plays;
        const row = rows[shown.length];
        row.className = 'more';
        setText(row.children[0], `${fmt(rest)} more`);
        row.children[1].firstChild.style.width = '0';
        setText(row.children[2].firstChild, fmt(restPlays));
        setText(row.children[2].lastChild, sum ? `${((100 * restPlays) / sum).toFixed(1)} %` : '');
      }
      if (!values.length) {
        const row = rows[0];
        row.className = 'more full';
        setText(row.children[0], 'No plays in this range.');
        row.children[1].firstChild.style.width = '0';
        setText(row.children[2].firstChild, ''); setText(row.children[2].lastChild, '');
      }
      setText(note, `${fmt(values.length)} ${values.length === 1 ? 'value' : 'values'} · ${fmt(sum)} plays`);
    }

    // MARK: top tracks
    const TOP_ROWS = 10;
    function makeTopRow() {
      const tr = document.createElement('tr');
      const rank = document.createElement('td'); rank.className = 'rank';
      const name = document.createElement('td');
      const button = document.createElement('button'); button.type = 'button'; name.appendChild(button);
      const plays = document.createElement('td'); plays.className = 'n';
      tr.append(rank, name, plays);
      return tr;
    }
    function renderTop(body, current) {
      const tracks = (body.tracks || []).slice(0, TOP_ROWS);
      const rows = fit($('top-rows'), TOP_ROWS, makeTopRow);
      for (let i = 0; i < TOP_ROWS; i++) {
        const row = rows[i], t = tracks[i], button = row.children[1].firstChild;
        setText(row.children[0], t ? String(i + 1) : '');
        setText(row.children[2], t ? fmt(t.plays) : '');
        button.hidden = !t;
        if (t) {
          setText(button, `Track ${t.track_id}`);
          setAttrs(button, { 'data-track': t.track_id, 'aria-label': `Show track ${t.track_id}, ${fmt(t.plays)} plays` });
          setAttrs(row, { 'aria-current': t.track_id === current });
        } else {
          setAttrs(row, { 'aria-current': false });
        }
      }
      setText($('top-note'), tracks.length ? RANGES[state.range].label : `no plays ${RANGES[state.range].label}`);
    }

    // MARK: the layers' status
    function reasonsText(byReason) {
      const entries = Object.entries(byReason || {}).filter((e) => e[1] > 0).sort((a, b) => b[1] - a[1]);
      return entries.length ? entries.map(([k, v]) => `${fmt(v)} ${k.replace(/_/g, ' ')}`).join(', ') : 'none';
    }
    function renderStatus(s) {
      const batch = s.batch || {}, rt = s.realtime || {};
      const coverage = batch.coverage || [];
      setText($('st-covered'), batch.covered_until
        ? `${timeText(batch.covered_until)}${coverage.length ? ` (from ${timeText(coverage[0].from)}${coverage.length > 1 ? `; ${coverage.length} separate ranges` : ''})` : ''}`
        : 'nothing covered yet');
      const run = (batch.runs || [])[0];
      setText($('st-run'), run
        ? `${timeText(run.finished_at)} · ${fmt(run.events_read)} events read, ${fmt(run.valid)} valid, ${fmt(run.duplicates)} duplicates`
        : 'no run yet');
      setText($('st-batch-rejected'), run ? reasonsText(run.rejected_by_reason) : '—');
      setText($('st-flush'), rt.last_flush_at ? `${timeText(rt.last_flush_at, true)} (${ageText(rt.last_flush_at)})` : 'no flush yet');
      const partitions = rt.partitions || [];
      setText($('st-lag'), typeof rt.lag_events === 'number'
        ? `${fmt(rt.lag_events)} events over ${fmt(partitions.length)} ${partitions.length === 1 ? 'partition' : 'partitions'}`
        : (partitions.length ? 'unknown' : 'no consumer has committed yet'));
      setText($('st-rate'), typeof rt.events_per_second === 'number' ? `${fmt(Math.round(rt.events_per_second))} events/s` : 'not measured by this process');
      setText($('st-rejected'), rt.rejected ? (rt.rejected.total ? `${fmt(rt.rejected.total)}: ${reasonsText(rt.rejected.by_reason)}` : 'none') : 'not reported by this process');
      const gaps = rt.offset_gaps || [];
      let skipped = 0;
      for (const g of gaps) skipped += g.skipped_events;
      setText($('st-gaps'), gaps.length ? `${fmt(gaps.length)} ${gaps.length === 1 ? 'gap' : 'gaps'}, ${fmt(skipped)} events skipped` : 'none');
      setText($('status-note'), `as of ${clockText(Date.now())}`);
    }

    // Redraw (not refetch) when the chart's width changes, e.g. a phone turned sideways.
    if ('ResizeObserver' in window) {
      let lastWidth = 0;
      new ResizeObserver(() => {
        const w = $('chart').clientWidth;
        if (w === lastWidth) return;
        lastWidth = w;
        drawTimeline(); drawHeat();
      }).observe($('chart'));
    }

    syncControls();
    fit($('top-rows'), TOP_ROWS, makeTopRow);
    refresh();
    })();
    """#
}
