/// The stats page's one stylesheet. Fixed heights for everything a refresh rewrites (chart,
/// heatmap, lists, table rows) and tabular figures, so that new numbers never move the layout.
enum PageStyle {
    static let css = #"""
    :root{--bg:#f4f5f9;--card:#fff;--ink:#1d2130;--muted:#5d6478;--line:#e3e6ef;--accent:#3b4cca;
    --batch:#3b5bdb;--batch-soft:#dbe4ff;--realtime:#e8590c;--realtime-soft:#ffe8d9;--mixed:#862e9c;--mixed-soft:#f3d9fa;
    --warn-bg:#fff4e6;--warn-ink:#8a3b00;--radius:12px;color-scheme:light}
    *{box-sizing:border-box}
    html{-webkit-text-size-adjust:100%}
    body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
    .num,.toptable td,.facts dd,.bars .v{font-variant-numeric:tabular-nums}
    a{color:var(--accent)}
    :focus-visible{outline:3px solid #7c8cff;outline-offset:2px}
    .sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
    .skip{position:absolute;left:-999px;top:8px;background:#fff;padding:6px 10px;border-radius:8px;z-index:10}
    .skip:focus{left:8px}
    .bar{display:flex;flex-wrap:wrap;gap:12px 24px;align-items:center;justify-content:space-between;padding:14px 24px;background:#161a2e;color:#fff}
    .brand{display:flex;gap:12px;align-items:center;min-width:0}
    .logo{width:32px;height:32px;flex:none}.logo .l1{fill:#748ffc}.logo .l2{fill:#ff922b}
    .name{display:block;font-weight:700;font-size:18px;letter-spacing:.2px}
    .tag{display:block;color:#aab1cc;font-size:13px}
    .pick{display:flex;flex-wrap:wrap;align-items:center;gap:6px 8px}
    .pick label{font-size:13px;color:#c9cee3}
    .pick input{width:11em;max-width:48vw;padding:7px 10px;border-radius:8px;border:1px solid #3a4163;background:#23294a;color:#fff;font:inherit}
    .pick input[aria-invalid=true]{border-color:#ff8787}
    .pick button,.seg button{font:inherit;cursor:pointer}
    .pick button{padding:7px 14px;border-radius:8px;border:0;background:#5c7cfa;color:#fff;font-weight:600}
    .help{flex-basis:100%;font-size:12px;color:#ffc9c9;min-height:0}
    .help:empty{display:none}
    main{display:grid;grid-template-columns:repeat(6,minmax(0,1fr));gap:16px;max-width:1200px;margin:0 auto;padding:20px 24px 8px}
    .card{grid-column:span 3;background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:16px 18px;box-shadow:0 1px 2px rgba(20,24,50,.04);min-width:0}
    .card.wide,.summary{grid-column:1/-1}
    #countries,#clients{grid-column:span 3}
    #top{grid-column:span 3}#status{grid-column:span 3}
    h1{font-size:20px;margin:0}h2{font-size:15px;margin:0;letter-spacing:.2px}
    .card-head{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:4px 12px;margin-bottom:10px}
    .note{color:var(--muted);font-size:13px;font-weight:400}
    .summary-head{display:flex;flex-wrap:wrap;gap:10px 16px;align-items:center;justify-content:space-between}
    .controls{display:flex;flex-wrap:wrap;gap:8px}
    .seg{display:inline-flex;border:1px solid var(--line);border-radius:9px;overflow:hidden;background:#f8f9fc}
    .seg button{border:0;background:transparent;padding:6px 11px;color:var(--muted);border-right:1px solid var(--line)}
    .seg button:last-child{border-right:0}
    .seg button[aria-pressed=true]{background:var(--accent);color:#fff;font-weight:600}
    .figures{display:grid;grid-template-columns:auto 1fr;gap:6px 28px;align-items:end;margin-top:12px}
    .total{grid-row:span 2}
    .big{font-size:44px;font-weight:750;letter-spacing:-1px;line-height:1.05}
    .unit{display:block;color:var(--muted);font-size:13px}
    .split{display:flex;flex-wrap:wrap;gap:4px 22px}
    .part{white-space:nowrap}.part .k{color:var(--muted);font-size:13px;margin-right:4px}.part .num{font-weight:650}
    .sw{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:6px;vertical-align:-1px}
    .sw-batch{background:var(--batch)}
    .sw-realtime{background:repeating-linear-gradient(45deg,var(--realtime) 0 3px,var(--realtime-soft) 3px 6px)}
    .sw-mixed{background:radial-gradient(circle,var(--mixed) 35%,var(--mixed-soft) 40%) 0 0/5px 5px}
    .splitbar{display:flex;height:8px;border-radius:4px;overflow:hidden;background:var(--line)}
    .seg-batch{background:var(--batch);width:0}
    .seg-realtime{background:repeating-linear-gradient(45deg,var(--realtime) 0 3px,var(--realtime-soft) 3px 6px);width:0}
    .fresh{grid-column:1/-1;margin:6px 0 0;color:var(--muted);font-size:13px;min-height:1.45em}
    .chart-wrap{height:240px;position:relative}
    .chart{display:block;width:100%;height:240px;overflow:visible}
    .heat-wrap{position:relative}
    .heat{display:block;width:100%;height:56px;border-radius:6px;background:repeating-linear-gradient(135deg,#f6f7fb 0 8px,#eef0f6 8px 16px)}
    .heat-axis{display:flex;justify-content:space-between;color:var(--muted);font-size:12px;margin-top:2px}
    .grid line{stroke:var(--line)}.grid text,.axis text{fill:var(--muted);font-size:11px}
    .m-batch{fill:var(--batch)}.m-realtime{fill:url(#hatch-realtime)}.m-mixed{fill:url(#hatch-mixed)}
    .b-batch{fill:var(--batch)}.b-realtime{fill:var(--realtime)}.b-mixed{fill:var(--mixed)}
    .pat-rt-bg{fill:var(--realtime-soft)}.pat-rt-fg{fill:var(--realtime)}.pat-mx-bg{fill:var(--mixed-soft)}.pat-mx-fg{fill:var(--mixed)}
    .heat .cell{fill:var(--batch)}.heat:has(rect.cell){background:#f8f9fc}
    .cursor{fill:rgba(29,33,48,.08);stroke:var(--ink);stroke-width:1;pointer-events:none}
    .readout{margin:8px 0 0;font-size:13px;color:var(--ink);height:2.9em;overflow:hidden}
    .legend{display:flex;flex-wrap:wrap;gap:4px 18px;list-style:none;margin:8px 0 0;padding:0;color:var(--muted);font-size:12.5px}
    .unavailable{color:var(--muted);font-style:italic}
    .bars{list-style:none;margin:0;padding:0;min-height:calc(8 * 30px)}
    .bars li{display:grid;grid-template-columns:minmax(0,7em) minmax(0,1fr) auto;gap:10px;align-items:center;height:30px}
    .bars .k{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
    .bars .track{height:10px;background:#eef0f6;border-radius:5px;overflow:hidden}
    .bars .fill{display:block;height:100%;background:var(--batch);border-radius:5px;width:0}
    .bars .v{text-align:right;white-space:nowrap}.bars .pct{color:var(--muted);font-size:12px;margin-left:6px;display:inline-block;min-width:3.2em}
    .bars li.more{color:var(--muted);font-size:13px}
    .bars:has(li.unavailable){min-height:0}.bars li.more .track{visibility:hidden}
    .bars li.full .k{grid-column:1/-1;white-space:normal}.bars li.full .track,.bars li.full .v{display:none}
    .toptable{width:100%;border-collapse:collapse}
    .toptable th{text-align:left;color:var(--muted);font-weight:500;font-size:12.5px;padding:0 6px 6px;border-bottom:1px solid var(--line)}
    .toptable td{height:32px;padding:0 6px;border-bottom:1px solid #f0f1f6}
    .toptable .rank{width:2.5em;color:var(--muted)}.toptable .n{text-align:right}
    .toptable tr[aria-current=true] td{background:#eef2ff}
    .toptable button{font:inherit;color:var(--accent);background:none;border:0;padding:4px 0;cursor:pointer;text-decoration:underline;text-underline-offset:2px}
    .facts{margin:0;display:grid;gap:0}
    .facts div{display:grid;grid-template-columns:minmax(0,11em) minmax(0,1fr);gap:12px;padding:6px 0;border-bottom:1px solid #f0f1f6}
    .facts dt{color:var(--muted);font-size:13px}.facts dd{margin:0;overflow-wrap:anywhere;font-size:14px}
    .foot{display:flex;flex-wrap:wrap;gap:6px 18px;justify-content:space-between;max-width:1200px;margin:0 auto;padding:8px 24px 28px;color:var(--muted);font-size:12.5px}
    .notice{position:fixed;left:50%;bottom:16px;transform:translateX(-50%);max-width:min(92vw,560px);padding:10px 14px;border-radius:10px;background:var(--warn-bg);color:var(--warn-ink);border:1px solid #ffc078;box-shadow:0 4px 16px rgba(0,0,0,.12);font-size:13.5px;visibility:hidden}
    .notice.show{visibility:visible}
    @media (max-width:860px){main{grid-template-columns:minmax(0,1fr);padding:14px 12px 8px;gap:12px}.card,#countries,#clients,#top,#status{grid-column:1/-1}.bar{padding:12px}}
    @media (max-width:480px){.figures{grid-template-columns:minmax(0,1fr)}.total{grid-row:auto}.big{font-size:36px}.card{padding:14px 12px}.facts div{grid-template-columns:minmax(0,1fr)}.tag{display:none}.chart-wrap,.chart{height:200px}.readout{height:4.35em}.foot{padding:8px 12px 24px}}
    """#
}
