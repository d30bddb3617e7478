// MARK: distinct listeners
// An estimate (a sketch past its exact size) is marked ≈, with a title saying why.
const listenerText = (n, exact) => (exact ? '' : '≈ ') + fmt(n);
const ESTIMATE_TITLE = 'an estimate: HyperLogLog, typically within 1.6 %';
function renderListeners(r) {
  const el = $('listeners'), note = $('listeners-note');
  if (r.status !== 200) {
    setText(el, '—');
    setText(note, r.status === 404 ? notAvailable(`/v1/${shown.kind}s/{id}/listeners`) : `the reader answered ${r.status}`);
    return;
  }
  const b = r.body;
  setText(el, listenerText(b.listeners, b.exact));
  setAttrs(el, { 'data-exact': b.exact, title: b.exact ? 'an exact count' : ESTIMATE_TITLE });
  const without = b.plays_without_listener ? ` · ${fmt(b.plays_without_listener)} plays without a listener id` : '';
  setText(note, (b.exact ? 'exact' : 'estimate') + without);
}
const SHOWN_DAYS = 14;
// `clipped`: the period is longer than the days asked for.
function renderListenerDays(r, clipped) {
  const list = $('listeners-list'), note = $('listeners-days-note');
  if (r.status !== 200 || !Array.isArray(r.body.points)) {
    const rows = fit(list, 1, makeBarRow);
    rows[0].className = 'more full unavailable';
    setText(rows[0].children[0], r.status === 404 ? notAvailable(`/v1/${shown.kind}s/{id}/listeners/timeline`) : `The reader answered ${r.status}.`);
    setText(note, 'not available');
    return;
  }
  // The latest days first.
  const days = r.body.points.slice(-SHOWN_DAYS).reverse();
  let max = 0;
  for (const d of days) if (d.listeners > max) max = d.listeners;
  const rows = fit(list, Math.max(1, days.length), makeBarRow);
  days.forEach((d, i) => {
    const row = rows[i];
    row.className = '';
    const k = row.children[0];
    k.className = 'k';
    setText(k, dateText(new Date(d.start)));
    k.title = `${dateText(new Date(d.start))}, ${SOURCES[d.source] || d.source}`;
    row.children[1].firstChild.style.width = max ? `${(100 * d.listeners) / max}%` : '0';
    const v = row.children[2];
    setText(v.firstChild, listenerText(d.listeners, d.exact));
    setAttrs(v, { 'data-exact': d.exact, title: d.exact ? 'an exact count' : ESTIMATE_TITLE });
    setText(v.lastChild, '');
  });
  if (!days.length) {
    const row = rows[0];
    row.className = 'more full';
    setText(row.children[0], 'No days in this period.');
  }
  const estimates = days.filter((d) => !d.exact).length;
  setText(note, (clipped || days.length < r.body.points.length ? `the last ${fmt(days.length)} ${days.length === 1 ? 'day' : 'days'}` : 'every day') +
    (estimates ? ` · ${fmt(estimates)} estimated` : ''));
}

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
    setText(rows[0].children[0], r.status === 404 ? notAvailable(`/v1/${shown.kind}s/{id}/breakdown`) : `The reader answered ${r.status}.`);
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
    setText(row.children[0], 'No plays in this period.');
    row.children[1].firstChild.style.width = '0';
    setText(row.children[2].firstChild, ''); setText(row.children[2].lastChild, '');
  }
  setText(note, `${fmt(values.length)} ${values.length === 1 ? 'value' : 'values'} · ${fmt(sum)} plays`);
}

// MARK: the top list: creators, or tracks in a track's view
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
  const kind = body.creators ? 'creator' : 'track', Kind = kind === 'creator' ? 'Creator' : 'Track';
  const items = (body.creators || body.tracks || []).slice(0, TOP_ROWS);
  const rows = fit($('top-rows'), TOP_ROWS, makeTopRow);
  for (let i = 0; i < TOP_ROWS; i++) {
    const row = rows[i], t = items[i], button = row.children[1].firstChild, id = t && t[kind + '_id'];
    setText(row.children[0], t ? String(i + 1) : '');
    setText(row.children[2], t ? fmt(t.plays) : '');
    button.hidden = !t;
    setText(button, t ? `${Kind} ${id}` : '');
    if (t) {
      setAttrs(button, { 'data-kind': kind, 'data-id': id, 'aria-label': `Show ${kind} ${id}, ${fmt(t.plays)} plays` });
    }
    setAttrs(row, { 'aria-current': !!t && id === current });
  }
  setText($('top-title'), `Top ${kind}s`);
  setText($('top-kind'), Kind);
  setText($('top-caption'), `The most played ${kind}s of the chosen period; choose one to show it`);
  setAttrs($('top-csv'), { 'aria-label': `Download the top ${kind}s as CSV` });
  setText($('top-note'), items.length ? rangeLabel() : `no plays ${rangeLabel()}`);
}

// MARK: a creator's tracks
// The API's ranking by the sorted column's signal (by plays for the track column), in the
// chosen order: a tie keeps the lower track id first, as the ranking does.
function sortedTracks(tracks) {
  const column = state.sort === 'track' ? 'track_id' : state.sort, sign = state.order === 'asc' ? 1 : -1;
  return tracks.slice().sort((a, b) => sign * (a[column] - b[column]) || a.track_id - b.track_id);
}
function makeTrackRow() {
  const tr = document.createElement('tr');
  const rank = document.createElement('td'); rank.className = 'rank';
  const name = document.createElement('td');
  const button = document.createElement('button'); button.type = 'button'; name.appendChild(button);
  tr.append(rank, name);
  for (const s of SIGNALS) {
    const td = document.createElement('td'); td.className = 'n'; td.dataset.label = s; tr.appendChild(td);
  }
  return tr;
}
function renderTracks(r) {
  const empty = $('tracks-empty'), note = $('tracks-note');
  const ok = r.status === 200 && Array.isArray(r.body.tracks);
  const tracks = ok ? sortedTracks(r.body.tracks) : [];
  const rows = fit($('tracks-rows'), tracks.length, makeTrackRow);
  tracks.forEach((t, i) => {
    const row = rows[i], button = row.children[1].firstChild;
    setAttrs(row, { 'data-track': t.track_id });
    setText(row.children[0], String(i + 1));
    setText(button, `Track ${t.track_id}`);
    setAttrs(button, { 'aria-label': `Show track ${t.track_id}, ${fmt(t.plays)} plays` });
    SIGNALS.forEach((s, k) => setText(row.children[2 + k], fmt(t[s])));
  });
  const signal = ok ? r.body.signal : state.sort;
  empty.hidden = tracks.length > 0;
  setText(empty, !ok ? (r.status === 404 ? notAvailable('/v1/creators/{id}/tracks') : `The reader answered ${r.status}.`)
    : `No track with ${signal} ${rangeLabel()}.`);
  empty.classList.toggle('unavailable', !ok);
  setText(note, !ok ? 'not available' : tracks.length < TRACK_ROWS ? `${fmt(tracks.length)} ${tracks.length === 1 ? 'track' : 'tracks'} with ${signal}`
    : `the ${fmt(tracks.length)} with the most ${signal}`);
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
  const gaps = (rt.offset_gaps || []).filter(g => g.kind !== 'went_back');
  const back = (rt.offset_gaps || []).length - gaps.length;
  let skipped = 0;
  for (const g of gaps) skipped += g.skipped_events;
  const gapText = gaps.length ? `${fmt(gaps.length)} ${gaps.length === 1 ? 'gap' : 'gaps'}, ${fmt(skipped)} events skipped` : '';
  const backText = back ? `offsets went back on ${fmt(back)} ${back === 1 ? 'partition' : 'partitions'} (topic made again?)` : '';
  setText($('st-gaps'), [gapText, backText].filter(Boolean).join('; ') || 'none');
  setText($('status-note'), `as of ${clockText(Date.now())}`);
}

// Redraw (not refetch) when the chart's width changes, e.g. a phone turned sideways.
if ('ResizeObserver' in window) {
  let lastWidth = 0;
  new ResizeObserver(() => {
    const w = $('chart').clientWidth;
    if (w === lastWidth) return;
    lastWidth = w;
    drawTimeline(); for (const h of Object.values(heatmaps)) h.draw();
  }).observe($('chart'));
}

syncControls();
fit($('top-rows'), TOP_ROWS, makeTopRow);
refresh();
