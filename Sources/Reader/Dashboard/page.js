const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const HOUR = 3600000, DAY = 24 * HOUR, REFRESH_MS = 5000, MAX_ID = 9007199254740991, MAX_POINTS = 10000;
// The periods of the picker, each ending with the current hour (or the fragment's `end`).
// `step` is the timeline's step until one is chosen: hours for a week, days otherwise.
const PERIODS = {
  '7d': { days: 7, label: '7 days', step: 'hour' },
  '28d': { days: 28, label: '28 days', step: 'day' },
  '90d': { days: 90, label: '90 days', step: 'day' },
  '12m': { months: 12, label: '12 months', step: 'day' },
  'all': { label: 'all time', step: 'day' },
};
const DEFAULT_PERIOD = '28d';
// The signals of SPEC §11, in the API's order; plays lead, the others are net counts (likes,
// reposts and comments can be taken back, so a bucket may be negative).
const SIGNALS = ['plays', 'downloads', 'likes', 'reposts', 'comments'];
// The columns a creator's tracks table sorts by: the track id (ascending first) or a signal
// (descending first, the API's ranking by that signal).
const COLUMNS = ['track', ...SIGNALS];
const firstOrder = (column) => column === 'track' ? 'asc' : 'desc';
// The fragment's key before the periods was `range`: its values open the nearest period.
const OLD_RANGES = { '48h': '7d', '7d': '7d', '30d': '28d', 'all': 'all' };
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
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
const idOf = (t) => (t && /^[0-9]{1,16}$/.test(t) && +t >= 1 && +t <= MAX_ID) ? +t : null;
const START = { creator: null, track: null, period: DEFAULT_PERIOD, step: PERIODS[DEFAULT_PERIOD].step, end: null, signal: 'plays', sort: 'plays', order: 'desc' };
// A view: a creator (`creator=7`), a track (`track=42`), or a track reached from its creator's
// table (`creator=7&track=42`, the creator only for the link back to it); neither opens the top one.
function parseHash() {
  const text = location.hash.replace(/^#/, '');
  if (!text.includes('=')) return null;
  const p = new URLSearchParams(text);
  const s = Object.assign({}, START, { step: null });
  s.track = idOf(p.get('track'));
  s.creator = idOf(p.get('creator'));
  const sort = p.get('sort'), order = p.get('order');
  if (COLUMNS.includes(sort)) s.sort = sort;
  s.order = order === 'asc' || order === 'desc' ? order : firstOrder(s.sort);
  const period = p.get('period'), range = p.get('range');
  if (period && has(PERIODS, period)) s.period = period;
  else if (!period && range && has(OLD_RANGES, range)) { s.period = OLD_RANGES[range]; s.old = true; }
  const sg = p.get('signal');
  if (SIGNALS.includes(sg)) s.signal = sg;
  const st = p.get('step');
  s.step = (st === 'hour' || st === 'day') ? st : PERIODS[s.period].step;
  // The period's end, an hour (2026-11-22T00:00:00Z): a view that names it shows the same
  // period on any day; without it the period ends with the current hour.
  const e = Date.parse(p.get('end') || '');
  if (isFinite(e) && e % HOUR === 0 && /Z$/.test(p.get('end'))) s.end = e;
  return s;
}
const hashOf = (s) => '#' + (s.creator ? `creator=${s.creator}&` : '') + (s.track ? `track=${s.track}&` : '') + `period=${s.period}&step=${s.step}`
  + (s.signal && s.signal !== 'plays' ? `&signal=${s.signal}` : '') + (s.sort !== 'plays' ? `&sort=${s.sort}` : '')
  + (s.order !== firstOrder(s.sort) ? `&order=${s.order}` : '') + (s.end ? `&end=${isoHour(s.end)}` : '');
// A fragment with the old key opens its period and is written anew in place (no new history entry).
function adopt(s) {
  if (s && s.old) { delete s.old; history.replaceState(null, '', hashOf(s)); }
  return s;
}
let state = adopt(parseHash()) || Object.assign({}, START);

// The timeline's signal tabs and the summary's figure of each signal but plays, made once from SIGNALS.
for (const signal of SIGNALS) {
  const b = document.createElement('button');
  setAttrs(b, { type: 'button', 'data-signal': signal, 'aria-pressed': 'false' });
  b.textContent = signal[0].toUpperCase() + signal.slice(1);
  $('signal-tabs').appendChild(b);
  if (signal === 'plays') continue;
  const item = document.createElement('div');
  item.className = 'sig';
  item.innerHTML = `<dt>${signal}</dt><dd><span id="sig-${signal}" class="num">—</span><span id="sig-${signal}-rt" class="rt note"></span> <span id="sig-${signal}-change" class="change"><span class="chg"></span><span></span></span></dd>`;
  $('signal-figures').appendChild(item);
}

function setState(patch) {
  const next = Object.assign({}, state, patch);
  if (patch.period && !patch.step) next.step = PERIODS[next.period].step;
  const h = hashOf(next);
  state = next;
  syncControls();
  if (location.hash !== h) location.hash = h; else refreshSoon();
}
window.addEventListener('hashchange', () => {
  const s = adopt(parseHash());
  if (!s) return;
  state = s;
  syncControls();
  refreshSoon();
});

function syncControls() {
  for (const b of $('periods').querySelectorAll('button')) setAttrs(b, { 'aria-pressed': b.dataset.period === state.period });
  for (const b of $('steps').querySelectorAll('button')) setAttrs(b, { 'aria-pressed': b.dataset.step === state.step });
  for (const b of $('signal-tabs').querySelectorAll('button')) setAttrs(b, { 'aria-pressed': b.dataset.signal === state.signal });
  for (const th of $('tracks').querySelectorAll('th[data-sort]')) {
    if (th.dataset.sort === state.sort) th.setAttribute('aria-sort', state.order === 'asc' ? 'ascending' : 'descending');
    else th.removeAttribute('aria-sort');
  }
  const input = $('id-input'), kind = $('kind-input');
  if (document.activeElement !== input && document.activeElement !== kind) {
    kind.value = state.track || (!state.creator && shown.kind === 'track') ? 'track' : 'creator';
    input.value = String(state.track || state.creator || '');
  }
  setText($('range-label'), rangeLabel());
  $('now').hidden = !state.end;
}
// "in the last 28 days", or with an end in the fragment "in the 28 days to 2026-11-22 00:00 UTC";
// for all time "of all time" or "until 2026-11-22 00:00 UTC".
function rangeLabel() {
  const p = PERIODS[state.period];
  if (!state.end) return state.period === 'all' ? 'of all time' : `in the last ${p.label}`;
  const end = timeText(new Date(state.end).toISOString());
  return state.period === 'all' ? `until ${end}` : `in the ${p.label} to ${end}`;
}

$('periods').addEventListener('click', (e) => { const b = e.target.closest('button'); if (b) setState({ period: b.dataset.period }); });
$('steps').addEventListener('click', (e) => { const b = e.target.closest('button'); if (b) setState({ step: b.dataset.step }); });
$('signal-tabs').addEventListener('click', (e) => { const b = e.target.closest('button'); if (b) setState({ signal: b.dataset.signal }); });
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
  const input = $('id-input'), id = idOf(input.value.trim());
  setAttrs(input, { 'aria-invalid': !id });
  setText($('id-help'), id ? '' : 'An id is a whole number from 1 to 9,007,199,254,740,991.');
  if (id) setState($('kind-input').value === 'track' ? { track: id, creator: null } : { creator: id, track: null });
});
// The top list opens a creator or a track; a track from it has no creator to go back to.
$('top-rows').addEventListener('click', (e) => {
  const b = e.target.closest('button[data-id]');
  if (b) setState(b.dataset.kind === 'creator' ? { creator: +b.dataset.id, track: null } : { track: +b.dataset.id, creator: null });
});
// A row of a creator's tracks (its button, by keyboard) opens the track, keeping the creator for the way back.
$('tracks-rows').addEventListener('click', (e) => {
  const row = e.target.closest('tr[data-track]');
  if (row) setState({ track: +row.dataset.track, creator: shown.id });
});
$('tracks').querySelector('thead').addEventListener('click', (e) => {
  const b = e.target.closest('button[data-sort]');
  if (!b) return;
  const column = b.dataset.sort;
  setState({ sort: column, order: column !== state.sort ? firstOrder(column) : state.order === 'asc' ? 'desc' : 'asc' });
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

// The start of the period that ends at `to`: 7, 28 or 90 days before it, or for 12 months the
// same hour a year before (29 February falls on 1 March).
function periodStart(to, p) {
  if (p.days) return to - p.days * DAY;
  const d = new Date(to);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - p.months, d.getUTCDate(), d.getUTCHours());
}
// The comparison period, by one rule for every period but all time:
// previous = [from − (to − from), from), the same number of hours just before it.
const previousOf = (w) => ({ from: w.from - (w.to - w.from), to: w.from });
const span = (from, to) => `from=${isoHour(from)}&to=${isoHour(to)}`;

function rangeWindow(status) {
  const to = state.end || Math.floor(Date.now() / HOUR) * HOUR + HOUR;
  const p = PERIODS[state.period];
  if (state.period !== 'all') {
    const from = periodStart(to, p);
    return { from, to, query: span(from, to) };
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

let generation = 0, timer = 0, lastGoodAt = 0, lastStatus = null, latestDay = null;
// The view on the screen: `auto` when the fragment names no subject and the page chose the top one.
let shown = { kind: null, id: null, auto: false };
let timelineBody = null;
// The previous period's totals, asked for when the track or the period changes (a period
// up to now moves with every hour) and again every COMPARE_MS, not on every refresh.
const COMPARE_MS = 60000;
let previous = { key: '', at: 0, counts: null, listeners: null };

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

// A card's CSV link: the request its numbers came from, with `format=csv` (the reader's CSV
// answer of the same list); hidden while that request has no list to give.
function csvLink(id, r) {
  const a = $(id);
  if (r) setAttrs(a, { href: r.path + (r.path.includes('?') ? '&' : '?') + 'format=csv' });
  a.hidden = !r || r.status !== 200;
}

// The subject's routes: `/v1/creators/7/…` or `/v1/tracks/42/…`.
const baseOf = (kind, id) => `/v1/${kind}s/${id}`;
const TRACK_ROWS = 20;

async function update(gen) {
  const failures = [];
  const watch = (r) => { if (failed(r)) failures.push(r); return r; };
  const w0 = rangeWindow(lastStatus);
  const range = w0.query ? '&' + w0.query : '';
  // The top list: creators, unless a track is shown. Without a subject in the fragment it also
  // chooses the view: the top creator, or the top track where no event of the period names a creator.
  const [status, ranked] = await Promise.all([
    get('/v1/status'),
    get((state.track ? '/v1/top' : '/v1/creators/top') + '?limit=10' + range),
  ]).then((rs) => rs.map(watch));
  if (gen !== generation) return;
  if (!failed(status)) { lastStatus = status.body; renderStatus(status.body); }
  let top = ranked, kind = state.track ? 'track' : 'creator', id = state.track || state.creator;
  if (!id) {
    if (failed(ranked)) ({ kind, id } = shown.auto ? shown : { kind, id });
    else if ((ranked.body.creators || []).length) id = ranked.body.creators[0].creator_id;
    else {
      top = watch(await get('/v1/top?limit=10' + range));
      if (gen !== generation) return;
      kind = 'track';
      id = failed(top) ? (shown.auto ? shown.id : null) : ((top.body.tracks || [])[0] || {}).track_id || null;
    }
  }
  if (!failed(top)) { renderTop(top.body, id); csvLink('top-csv', top); }
  if (id) {
    $('latest').hidden = true;
    const w = rangeWindow(lastStatus);
    let step = state.step;
    let forced = false;
    if (step === 'hour' && (w.to - w.from) / HOUR > MAX_POINTS) { step = 'day'; forced = true; }
    const q = w.query ? '?' + w.query : '';
    const base = baseOf(kind, id);
    // Listeners per day: the card shows the last SHOWN_DAYS UTC days of the period, and asks for no more.
    const lastDay = Math.floor((w.to - 1) / DAY) * DAY, daysFrom = Math.max(w.from, lastDay - (SHOWN_DAYS - 1) * DAY);
    // The previous period, none for all time.
    const prev = state.period === 'all' ? null : previousOf(w);
    const key = prev ? `${base} ${prev.from} ${prev.to}` : '';
    const ask = prev && (key !== previous.key || Date.now() - previous.at >= COMPARE_MS);
    const signal = state.signal === 'plays' ? '' : `&signal=${state.signal}`;
    // One request per card whatever the number of signals: counts and a creator's tracks carry every one.
    const paths = {
      counts: `${base}/counts${q}`,
      timeline: `${base}/timeline?${span(w.from, w.to)}&step=${step}${signal}`,
      countries: `${base}/breakdown?by=country${range}`,
      clients: `${base}/breakdown?by=client${range}`,
      listeners: `${base}/listeners${q}`,
      listenerDays: `${base}/listeners/timeline?${span(daysFrom, w.to)}&step=day`,
    };
    if (kind === 'track') {
      paths.waveform = `${base}/waveform${q}`;
      paths.commentWaveform = `${base}/waveform?signal=comments${range}`;
    } else {
      paths.tracks = `${base}/tracks?signal=${state.sort === 'track' ? 'plays' : state.sort}&limit=${TRACK_ROWS}${range}`;
    }
    if (ask) {
      paths.prevCounts = `${base}/counts?${span(prev.from, prev.to)}`;
      paths.prevListeners = `${base}/listeners?${span(prev.from, prev.to)}`;
    }
    const names = Object.keys(paths);
    const answers = await Promise.all(names.map((n) => get(paths[n]).then(watch)));
    if (gen !== generation) return;
    const r = Object.fromEntries(names.map((n, i) => [n, answers[i]]));
    showView(kind, id, !(state.track || state.creator));
    if (ask && !failed(r.prevCounts) && !failed(r.prevListeners)) {
      previous = { key, at: Date.now(), counts: r.prevCounts.status === 200 ? totalsOf(r.prevCounts.body) : null,
        listeners: r.prevListeners.status === 200 ? r.prevListeners.body : null };
    }
    const before = prev && previous.key === key ? previous : null;
    if (!failed(r.counts)) {
      renderSummary(r.counts);
      csvLink('counts-csv', r.counts);
      const now = r.counts.status === 200 ? { status: 200, body: totalsOf(r.counts.body) } : r.counts;
      for (const s of SIGNALS) renderChange(s === 'plays' ? 'total-change' : `sig-${s}-change`, now, before && before.counts, s);
    }
    if (!failed(r.timeline)) { renderTimeline(r.timeline, step, forced); csvLink('timeline-csv', r.timeline); }
    if (r.waveform && !failed(r.waveform)) heatmaps.plays.render(r.waveform);
    if (r.commentWaveform && !failed(r.commentWaveform)) heatmaps.comments.render(r.commentWaveform);
    if (r.tracks && !failed(r.tracks)) { renderTracks(r.tracks); csvLink('tracks-csv', r.tracks); }
    if (!failed(r.countries)) { renderBreakdown('countries', r.countries); csvLink('countries-csv', r.countries); }
    if (!failed(r.clients)) { renderBreakdown('clients', r.clients); csvLink('clients-csv', r.clients); }
    if (!failed(r.listeners)) { renderListeners(r.listeners); renderChange('listeners-change', r.listeners, before && before.listeners, 'listeners'); }
    if (!failed(r.listenerDays)) { renderListenerDays(r.listenerDays, daysFrom > w.from); csvLink('listeners-csv', r.listenerDays); }
  } else if (!failed(top)) {
    renderEmpty();
  }
  if (failures.length) showNotice(failures); else { lastGoodAt = Date.now(); hideNotice(); }
  setText($('updated'), lastGoodAt ? `Updated ${clockText(lastGoodAt)} · refreshes every ${REFRESH_MS / 1000} s` : 'Waiting for the reader…');
}

// The cards of the view: a creator's tracks, or a track's waveforms and the link to its creator.
function showView(kind, id, auto) {
  shown = { kind, id, auto };
  $('tracks').hidden = kind !== 'creator';
  $('waveform').hidden = kind !== 'track';
  const back = $('back');
  back.hidden = !(kind === 'track' && state.creator);
  if (!back.hidden) {
    setText(back, `← creator ${state.creator}`);
    setAttrs(back, { href: hashOf(Object.assign({}, state, { track: null })), 'aria-label': `Back to creator ${state.creator}` });
  }
  setText($('subject-title'), `${kind === 'creator' ? 'Creator' : 'Track'} ${id}`);
  setText($('subject-note'), auto ? `— the top ${kind} of the period; type an id or pick one below` : '');
}

// A counts answer's totals by signal: { plays: 9, likes: -1, … }.
function totalsOf(body) {
  const totals = {};
  for (const s of SIGNALS) totals[s] = body && body.counts && body.counts[s] ? body.counts[s].total : null;
  return totals;
}

// MARK: the change against the previous period
// "+12 %", "−3 %" or "±0 %": (now − before) / before, rounded half away from zero to a whole
// percent; "new" when the previous period held none. An estimate on either side makes it "≈".
// A net count that was negative (more unlikes than likes) has no percentage: the difference then.
function changeFigure(now, before) {
  if (!before) return now ? 'new' : '';
  if (before < 0) return now === before ? '±0' : (now > before ? '+' : '−') + fmt(Math.abs(now - before));
  const pct = (100 * (now - before)) / before, r = Math.round(Math.abs(pct));
  return (r === 0 ? '±' : pct > 0 ? '+' : '−') + fmt(r) + ' %';
}
function renderChange(id, r, before, what) {
  const el = $(id), figure = el.firstChild, rest = el.lastChild;
  const body = r.status === 200 ? r.body : null;
  const now = body && body[what], then = before && before[what];
  if (typeof now !== 'number' || typeof then !== 'number') {
    setText(figure, ''); setText(rest, ''); el.className = 'change';
    return;
  }
  const label = PERIODS[state.period].label;
  const text = changeFigure(now, then);
  const estimate = what === 'listeners' && (!body.exact || !before.exact) && then ? '≈ ' : '';
  setText(figure, text ? estimate + text : '');
  setText(rest, !then ? (now ? ` — none in the previous ${label}` : `none in the previous ${label} either`) : ` vs the previous ${label}`);
  el.className = 'change ' + (now > then ? 'up' : now < then ? 'down' : 'same');
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
function renderSummary(r) {
  if (r.status !== 200) {
    setText($('total'), '—');
    setText($('freshness'), (r.body && r.body.error && r.body.error.message) || `the reader answered ${r.status}`);
    return;
  }
  const b = r.body, plays = b.counts.plays;
  setText($('total'), fmt(plays.total));
  setText($('batch-plays'), fmt(plays.batch));
  setText($('realtime-plays'), fmt(plays.realtime));
  const sum = (plays.batch || 0) + (plays.realtime || 0);
  $('split-batch').style.width = sum ? `${(100 * plays.batch) / sum}%` : '0';
  $('split-realtime').style.width = sum ? `${(100 * plays.realtime) / sum}%` : '0';
  // The other signals' split where it matters: the part the realtime layer counted, when any.
  for (const s of SIGNALS.slice(1)) {
    const c = b.counts[s];
    setText($(`sig-${s}`), fmt(c.total));
    setText($(`sig-${s}-rt`), c.realtime ? ` (${fmt(c.realtime)} realtime)` : '');
  }
  setText($('freshness'), freshnessText(b.freshness));
}
// The period holds no plays: never say "no plays" of a store that holds some (/v1/status
// `latest_counts`, null when it holds none); offer the day of the latest.
function renderEmpty() {
  const s = lastStatus, latest = s && s.latest_counts, at = latest ? Date.parse(latest.hour) : NaN;
  const none = !!s && 'latest_counts' in s && !latest;
  latestDay = isFinite(at) ? Math.floor(at / DAY) * DAY : null;
  setText($('subject-title'), none ? 'No plays counted yet' : `No plays ${rangeLabel()}`);
  setText($('subject-note'), none ? '— the store holds none; they show here as soon as a layer counts one' : '');
  if (latestDay !== null) {
    const day = dayFormat.format(latestDay);
    setText($('latest-text'), `The latest plays are on ${day}.`);
    setText($('latest-go'), `Show ${day}`);
  }
  $('latest').hidden = latestDay === null;
  for (const id of ['total', 'batch-plays', 'realtime-plays', ...SIGNALS.slice(1).map((s) => `sig-${s}`)]) setText($(id), '0');
  setText($('freshness'), lastStatus ? freshnessText(lastStatus.freshness) : '—');
  shown = { kind: null, id: null, auto: true };
  $('back').hidden = true;
  timelineBody = null;
  fit($('chart-marks'), 0); fit($('chart-band'), 0);
  setText($('chart-readout'), 'No plays to show in this period.');
  for (const h of Object.values(heatmaps)) h.clear('Nothing to show in this period.');
  fit($('tracks-rows'), 0);
  for (const s of SIGNALS.slice(1)) setText($(`sig-${s}-rt`), '');
  for (const which of ['countries', 'clients']) fit($(which + '-list'), 0);
  setText($('listeners'), '0'); setText($('listeners-note'), '');
  fit($('listeners-list'), 0); setText($('listeners-days-note'), '');
  for (const id of ['total-change', 'listeners-change', ...SIGNALS.slice(1).map((s) => `sig-${s}-change`)]) {
    const el = $(id); setText(el.firstChild, ''); setText(el.lastChild, '');
  }
  for (const id of ['counts-csv', 'timeline-csv', 'tracks-csv', 'countries-csv', 'clients-csv', 'listeners-csv']) csvLink(id, null);
}
