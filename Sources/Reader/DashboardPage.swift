/// `GET /`: until the dashboard lands, a plain page for people that links the API.
enum DashboardPage {
    static let html: [UInt8] = Array("""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><title>Counterpoint</title>
    <style>body{font:16px/1.5 system-ui,sans-serif;max-width:44em;margin:2em auto;padding:0 1em;color:#222}
    code{background:#f3f3f3;padding:0 .3em}</style></head>
    <body><h1>Counterpoint</h1>
    <p>Play counts per track and UTC hour: exact where the batch layer has covered an hour,
    fresh from the realtime layer everywhere else.</p>
    <ul>
    <li><a href="/v1/status">/v1/status</a> — batch coverage, realtime offsets and lag, rejected events</li>
    <li><a href="/v1/top?limit=10">/v1/top?limit=10</a> — the most played tracks</li>
    <li><a href="/v1/tracks/1/plays">/v1/tracks/1/plays</a> — one track's total</li>
    <li><a href="/v1/tracks/1/timeline?step=day">/v1/tracks/1/timeline?step=day</a> — its timeline</li>
    <li><code>/v1/plays?track_id=1,2,3</code> — several tracks at once</li>
    <li><a href="/metrics">/metrics</a> — Prometheus metrics; <a href="/healthz">/healthz</a>, <a href="/readyz">/readyz</a></li>
    </ul>
    <p>The API is described in <code>docs/openapi.yaml</code>.</p>
    </body></html>
    """.utf8)
}
