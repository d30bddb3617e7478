-- Dashboard traffic for wrk: one request kind per wrk process, so that wrk's latency
-- histogram is that kind's. Track ids are drawn uniformly from a sample of the replayed
-- events' track ids, which gives requests the events' own popularity skew.
--
--   wrk -t1 -cN -dD -s dashboard.lua http://127.0.0.1:PORT -- KIND TRACK_FILE MEAN_DELAY_MS
--
-- TRACK_FILE: one sampled event a line, "TRACK_ID CREATOR_ID" (0: the event named no creator).
-- KIND: totals | timeline-hour | timeline-day | listeners | multi-get | creator | top. Each connection waits an
-- exponentially distributed pause (mean MEAN_DELAY_MS) before each request, so the kind's
-- rate is about connections / (pause + latency): dashboards, not a flood. done() prints one
-- JSON line with the kind's figures.

local threads = {}
local kind, tracks, creators, mean_delay

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

local function iso_hour(epoch)
  return os.date("!%Y-%m-%dT%H:00:00Z", epoch)
end

function init(args)
  kind = args[1]
  mean_delay = tonumber(args[3])
  tracks = {}
  creators = {}
  for line in io.lines(args[2]) do
    local track, creator = line:match("^(%d+)%s*(%d*)")
    if track then tracks[#tracks + 1] = track end
    if creator and creator ~= "" and creator ~= "0" then creators[#creators + 1] = creator end
  end
  math.randomseed(os.time() * 1000 + (number or 1) * 7919)
end

local function track()
  return tracks[math.random(#tracks)]
end

local function creator()
  return creators[math.random(#creators)]
end

function request()
  local now = os.time()
  local path
  if kind == "totals" then
    -- half all-time totals, half the last 24 hours
    if math.random() < 0.5 then
      path = "/v1/tracks/" .. track() .. "/plays"
    else
      path = "/v1/tracks/" .. track() .. "/plays?from=" .. iso_hour(now - 86400)
    end
  elseif kind == "timeline-hour" then
    path = "/v1/tracks/" .. track() .. "/timeline?step=hour&from=" .. iso_hour(now - 48 * 3600) ..
           "&to=" .. iso_hour(now + 3600)
  elseif kind == "timeline-day" then
    path = "/v1/tracks/" .. track() .. "/timeline?step=day&from=" .. iso_hour(now - 30 * 86400) ..
           "&to=" .. iso_hour(now + 3600)
  elseif kind == "listeners" then
    -- distinct listeners: half over the last 7 or 30 days, half per day over 30 days
    if math.random() < 0.5 then
      local days = math.random() < 0.5 and 7 or 30
      path = "/v1/tracks/" .. track() .. "/listeners?from=" .. iso_hour(now - days * 86400)
    else
      path = "/v1/tracks/" .. track() .. "/listeners/timeline?step=day&from=" .. iso_hour(now - 30 * 86400) ..
             "&to=" .. iso_hour(now + 3600)
    end
  elseif kind == "multi-get" then
    local ids = {}
    for i = 1, 50 do ids[i] = track() end
    path = "/v1/plays?track_id=" .. table.concat(ids, ",")
  elseif kind == "creator" then
    -- a creator's page: every signal's counts over 28 days, its tracks table, its day timeline,
    -- or the creators ranked (the page's opening); a log without creators asks the ranking only
    local pick = #creators > 0 and math.random() or 1
    local since = "from=" .. iso_hour(now - 28 * 86400)
    if pick < 0.35 then
      path = "/v1/creators/" .. creator() .. "/counts?" .. since
    elseif pick < 0.65 then
      path = "/v1/creators/" .. creator() .. "/tracks?limit=50&" .. since
    elseif pick < 0.9 then
      path = "/v1/creators/" .. creator() .. "/timeline?step=day&" .. since .. "&to=" .. iso_hour(now + 3600)
    else
      path = "/v1/creators/top?limit=10&" .. since
    end
  elseif kind == "top" then
    path = "/v1/top?from=" .. iso_hour(now - 24 * 3600) .. "&limit=" .. (math.random() < 0.5 and "10" or "50")
  else
    error("unknown request kind " .. tostring(kind))
  end
  return wrk.format("GET", path)
end

function delay()
  if mean_delay <= 0 then return 0 end
  local pause = -math.log(1 - math.random()) * mean_delay
  return math.min(pause, 10 * mean_delay)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"kind":"%s","requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f}}\n',
    kind, summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max, latency.mean))
end
