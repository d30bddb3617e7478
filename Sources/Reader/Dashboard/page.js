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
const dayFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
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
  const s = { track: null, range: '7d', step: null, end: null };
  const t = p.get('track');
  if (t && /^[0-9]{1,16}$/.test(t) && +t >= 1 && +t <= MAX_ID) s.track = +t;
  const r = p.get('range');
  if (r && Object.prototype.hasOwnProperty.call(RANGES, r)) s.range = r;
  const st = p.get('step');
  s.step = (st === 'hour' || st === 'day') ? st : RANGES[s.range].step;
  // The period's end, an hour (2026-11-22T00:00:00Z): a view that names it shows the same
  // period on any day; without it the period ends with the current hour.
  const e = Date.parse(p.get('end') || '');
  if (isFinite(e) && e % HOUR === 0 && /Z$/.test(p.get('end'))) s.end = e;
  return s;
}
const hashOf = (s) => '#' + (s.track ? `track=${s.track}&` : '') + `range=${s.range}&step=${s.step}` + (s.end ? `&end=${isoHour(s.end)}` : '');
let state = parseHash() || { track: null, range: '7d', step: 'hour', end: null };

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
  setText($('range-label'), rangeLabel());
  $('now').hidden = !state.end;
}
// "in the last 7 days", or with an end in the fragment "in the 7 days to 2026-11-22 00:00 UTC".
function rangeLabel() {
  const r = RANGES[state.range];
  if (!state.end) return r.label;
  const end = timeText(new Date(state.end).toISOString());
  return r.hours ? `in the ${r.label.replace(/^in the last /, '')} to ${end}` : `until ${end}`;
}

$('ranges').addEventListener('click', (e) => { const b = e.target.closest('button'); if (b) setState({ range: b.dataset.range }); });
$('steps').addEventListener('click', (e) => { const b = e.target.closest('button'); if (b) setState({ step: b.dataset.step }); });
$('now').addEventListener('click', () => setState({ end: null }));
// To the latest plays: the period ends with their UTC day (or now, if that is today).
$('latest-go').addEventListener('click', () => {
  if (latestDay === null) return;
  const end = latestDay + DAY;
  setState({ end: end > Math.floor(Date.now() / HOUR) * HOUR + HOUR ? null : end });
  $('summary').focus();
});
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
  const to = state.end || Math.floor(Date.now() / HOUR) * HOUR + HOUR;
  const r = RANGES[state.range];
  if (r.hours) {
    const from = to - r.hours * HOUR;
    return { from, to, query: `from=${isoHour(from)}&to=${isoHour(to)}` };
  }
  // All time: from the first hour the batch layer covers (or two days back when it covers
  // nothing yet) to the end of the current hour or of the coverage, or to the fragment's end.
  let from = to - 48 * HOUR, end = to;
  const coverage = status && status.batch && status.batch.coverage;
  if (coverage && coverage.length) {
    for (const c of coverage) {
      const f = Date.parse(c.from), t = Date.parse(c.to);
      if (f < from) from = f;
      if (t > end && !state.end) end = t;
    }
  }
  return { from, to: end, query: state.end ? `to=${isoHour(end)}` : '' };
}

let generation = 0, timer = 0, lastGoodAt = 0, lastStatus = null, autoTrack = null;
let timelineBody = null, heatBody = null, shownTrack = null, latestDay = null;

function refreshSoon() { clearTimeout(timer); timer = setTimeout(refresh, 0); }

// Always schedules the next refresh, even when drawing an answer failed, so one bad
// answer never stops the page for good.
async function refresh() {
  const gen = ++generation;
  clearTimeout(timer);
  try {
    await update(gen);
  } finally {
    if (gen === generation) timer = setTimeout(refresh, REFRESH_MS);
  }
}

async function update(gen) {
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
    $('latest').hidden = true;
    const w = rangeWindow(lastStatus);
    let step = state.step;
    let forced = false;
    if (step === 'hour' && (w.to - w.from) / HOUR > MAX_POINTS) { step = 'day'; forced = true; }
    const q = w.query ? '?' + w.query : '';
    const base = `/v1/tracks/${id}`;
    const [plays, timeline, waveform, countries, clients, listeners, listenerDays] = await Promise.all([
      get(`${base}/plays${q}`),
      get(`${base}/timeline?from=${isoHour(w.from)}&to=${isoHour(w.to)}&step=${step}`),
      get(`${base}/waveform${q}`),
      get(`${base}/breakdown?by=country${w.query ? '&' + w.query : ''}`),
      get(`${base}/breakdown?by=client${w.query ? '&' + w.query : ''}`),
      get(`${base}/listeners${q}`),
      get(`${base}/listeners/timeline?from=${isoHour(w.from)}&to=${isoHour(w.to)}&step=day`),
    ]).then((rs) => rs.map(track));
    if (gen !== generation) return;
    if (!failed(plays)) renderSummary(id, plays);
    if (!failed(timeline)) renderTimeline(timeline, step, forced);
    if (!failed(waveform)) renderHeat(waveform);
    if (!failed(countries)) renderBreakdown('countries', countries);
    if (!failed(clients)) renderBreakdown('clients', clients);
    if (!failed(listeners)) renderListeners(listeners);
    if (!failed(listenerDays)) renderListenerDays(listenerDays);
    shownTrack = id;
  } else if (!failed(top)) {
    renderEmpty();
  }
  if (failures.length) showNotice(failures); else { lastGoodAt = Date.now(); hideNotice(); }
  setText($('updated'), lastGoodAt ? `Updated ${clockText(lastGoodAt)} · refreshes every ${REFRESH_MS / 1000} s` : 'Waiting for the reader…');
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
  const replica = typeof f.replica_lag_ms === 'number' ? `; read from a standby ${fmt(f.replica_lag_ms)} ms behind its primary` : '';
  return `${exact}, ${fresh}${lag}${replica}`;
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
// The period holds no plays: never say "no plays" of a store that holds some (/v1/status
// `latest_counts`, null when it holds none); offer the day of the latest.
function renderEmpty() {
  const s = lastStatus, latest = s && s.latest_counts, at = latest ? Date.parse(latest.hour) : NaN;
  const none = !!s && 'latest_counts' in s && !latest;
  latestDay = isFinite(at) ? Math.floor(at / DAY) * DAY : null;
  setText($('track-title'), none ? 'No plays counted yet' : `No plays ${rangeLabel()}`);
  setText($('track-note'), none ? '— the store holds none; they show here as soon as a layer counts one' : '');
  if (latestDay !== null) {
    const day = dayFormat.format(latestDay);
    setText($('latest-text'), `The latest plays are on ${day}.`);
    setText($('latest-go'), `Show ${day}`);
  }
  $('latest').hidden = latestDay === null;
  for (const id of ['total', 'batch-plays', 'realtime-plays']) setText($(id), '0');
  setText($('freshness'), lastStatus ? freshnessText(lastStatus.freshness) : '—');
  timelineBody = null; heatBody = null;
  fit($('chart-marks'), 0); fit($('chart-band'), 0);
  fit($('heat-cells'), 0);
  setText($('chart-readout'), 'No plays to show in this period.');
  setText($('heat-readout'), 'No plays to show in this period.');
  for (const which of ['countries', 'clients']) fit($(which + '-list'), 0);
  setText($('listeners'), '0'); setText($('listeners-note'), '');
  fit($('listeners-list'), 0); setText($('listeners-days-note'), '');
}
