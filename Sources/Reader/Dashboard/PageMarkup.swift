/// The stats page's HTML body. Every element the script fills in has an id and a fixed place,
/// so a refresh changes text and attributes in place and nothing moves. No inline `style`
/// attributes and no inline event handlers: the Content-Security-Policy allows only the one
/// stylesheet and the one script by hash.
enum PageMarkup {
    static let body = #"""
    <a class="skip" href="#summary">Skip to the numbers</a>
    <header class="bar">
      <div class="brand">
        <svg class="logo" viewBox="0 0 32 32" aria-hidden="true"><rect x="3" y="14" width="5" height="14" rx="1.5" class="l1"/><rect x="10.5" y="6" width="5" height="22" rx="1.5" class="l2"/><rect x="18" y="10" width="5" height="18" rx="1.5" class="l1"/><rect x="25.5" y="3" width="5" height="25" rx="1.5" class="l2"/></svg>
        <div><span class="name">Counterpoint</span><span class="tag">play counts — exact where the batch has been, fresh everywhere else</span></div>
      </div>
      <form id="pick" class="pick" role="search" novalidate>
        <label for="track-input">Track id</label>
        <input id="track-input" name="track" inputmode="numeric" autocomplete="off" spellcheck="false" placeholder="e.g. 42" aria-describedby="track-help">
        <button type="submit">Show</button>
        <span id="track-help" class="help" aria-live="polite"></span>
      </form>
    </header>
    <main>
      <section id="summary" class="card summary" aria-labelledby="summary-title" tabindex="-1">
        <div class="summary-head">
          <h1 id="summary-title"><span id="track-title">Track</span> <span id="track-note" class="note"></span></h1>
          <div class="controls">
            <div role="group" aria-label="Range" class="seg" id="ranges">
              <button type="button" data-range="48h" aria-pressed="false">48 h</button><button type="button" data-range="7d" aria-pressed="false">7 d</button><button type="button" data-range="30d" aria-pressed="false">30 d</button><button type="button" data-range="all" aria-pressed="false">All time</button>
            </div>
            <div role="group" aria-label="Step" class="seg" id="steps">
              <button type="button" data-step="hour" aria-pressed="false">Hour</button><button type="button" data-step="day" aria-pressed="false">Day</button>
            </div>
          </div>
        </div>
        <div class="figures">
          <div class="total"><span id="total" class="num big">—</span> <span class="unit">plays <span id="range-label">in the chosen range</span></span></div>
          <div class="split" aria-label="Where the plays come from">
            <div class="part"><span class="sw sw-batch" aria-hidden="true"></span><span class="k">batch (exact)</span> <span id="batch-plays" class="num">—</span></div>
            <div class="part"><span class="sw sw-realtime" aria-hidden="true"></span><span class="k">realtime (fresh)</span> <span id="realtime-plays" class="num">—</span></div>
          </div>
          <div class="splitbar" aria-hidden="true"><span id="split-batch" class="seg-batch"></span><span id="split-realtime" class="seg-realtime"></span></div>
          <p id="freshness" class="fresh">—</p>
        </div>
      </section>

      <section id="timeline" class="card wide" aria-labelledby="timeline-title">
        <div class="card-head"><h2 id="timeline-title">Timeline</h2><span id="timeline-note" class="note"></span></div>
        <div class="chart-wrap">
          <svg id="chart" class="chart" role="group" tabindex="0" aria-roledescription="chart" aria-label="Plays per bucket. Use the left and right arrow keys to read each bucket." aria-describedby="chart-readout">
            <defs>
              <pattern id="hatch-realtime" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" class="pat-rt-bg"/><rect width="3" height="6" class="pat-rt-fg"/></pattern>
              <pattern id="hatch-mixed" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" class="pat-mx-bg"/><circle cx="3" cy="3" r="1.4" class="pat-mx-fg"/></pattern>
            </defs>
            <g id="chart-grid"></g><g id="chart-marks"></g><g id="chart-band"></g><g id="chart-axis"></g><rect id="chart-cursor" class="cursor" x="0" y="0" width="0" height="0"/>
          </svg>
        </div>
        <p id="chart-readout" class="readout" aria-live="polite">Hover over the chart, or focus it and use the arrow keys, to read a bucket.</p>
        <ul class="legend" aria-label="Legend">
          <li><span class="sw sw-batch" aria-hidden="true"></span>batch — exact, recomputed from the logs</li>
          <li><span class="sw sw-realtime" aria-hidden="true"></span>realtime — counted from the stream</li>
          <li><span class="sw sw-mixed" aria-hidden="true"></span>mixed — a day with both</li>
        </ul>
      </section>

      <section id="waveform" class="card wide" aria-labelledby="waveform-title">
        <div class="card-head"><h2 id="waveform-title">Where plays start on the waveform</h2><span id="waveform-note" class="note"></span></div>
        <div class="heat-wrap">
          <svg id="heat" class="heat" role="group" tabindex="0" aria-roledescription="heatmap" aria-label="Plays by starting position, 100 buckets. Use the left and right arrow keys to read each bucket." aria-describedby="heat-readout"><g id="heat-cells"></g><rect id="heat-cursor" class="cursor" x="0" y="0" width="0" height="0"/></svg>
          <div class="heat-axis" aria-hidden="true"><span>start</span><span>middle</span><span>end</span></div>
        </div>
        <p id="heat-readout" class="readout" aria-live="polite">—</p>
      </section>

      <section id="countries" class="card" aria-labelledby="countries-title">
        <div class="card-head"><h2 id="countries-title">Countries</h2><span id="countries-note" class="note"></span></div>
        <ol id="countries-list" class="bars"></ol>
      </section>

      <section id="clients" class="card" aria-labelledby="clients-title">
        <div class="card-head"><h2 id="clients-title">Clients</h2><span id="clients-note" class="note"></span></div>
        <ol id="clients-list" class="bars"></ol>
      </section>

      <section id="top" class="card" aria-labelledby="top-title">
        <div class="card-head"><h2 id="top-title">Top tracks</h2><span id="top-note" class="note"></span></div>
        <table class="toptable">
          <caption class="sr">The most played tracks of the chosen range; choose one to show it</caption>
          <thead><tr><th scope="col" class="rank">#</th><th scope="col">Track</th><th scope="col" class="n">Plays</th></tr></thead>
          <tbody id="top-rows"></tbody>
        </table>
      </section>

      <section id="status" class="card" aria-labelledby="status-title">
        <div class="card-head"><h2 id="status-title">Layers</h2><span id="status-note" class="note"></span></div>
        <dl class="facts">
          <div><dt>Batch covered until</dt><dd id="st-covered">—</dd></div>
          <div><dt>Last batch run</dt><dd id="st-run">—</dd></div>
          <div><dt>Rejected by the last batch</dt><dd id="st-batch-rejected">—</dd></div>
          <div><dt>Realtime last flush</dt><dd id="st-flush">—</dd></div>
          <div><dt>Consumer lag</dt><dd id="st-lag">—</dd></div>
          <div><dt>Ingest</dt><dd id="st-rate">—</dd></div>
          <div><dt>Rejected by the consumer</dt><dd id="st-rejected">—</dd></div>
          <div><dt>Offset gaps</dt><dd id="st-gaps">—</dd></div>
        </dl>
      </section>
    </main>
    <footer class="foot">
      <span id="updated">Loading…</span>
      <span class="api">JSON: <a href="/v1/status">status</a> · <a href="/v1/top?limit=10">top</a> · <a href="/metrics">metrics</a> · <a href="/readyz">readiness</a></span>
    </footer>
    <div id="notice" class="notice" role="status" aria-live="polite" aria-atomic="true"></div>
    """#
}
