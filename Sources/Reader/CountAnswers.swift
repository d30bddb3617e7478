import CounterpointCore
import CounterStore
import Runtime

/// The count endpoints of docs/openapi.yaml: each turns validated parameters into store queries and
/// renders the answer. They return bytes, never touch HTTP, and throw `APIError` for bad
/// input (store failures propagate and become 503 one level up).
struct CountAnswers {
    /// Longest timeline one answer may hold (docs/openapi.yaml).
    static let maxTimelinePoints: Int64 = 10_000
    static let maxTracksPerRequest = 1_000
    static let maxTopLimit = 1_000
    /// Default timeline windows when `from`/`to` are absent: "all time" zero-filled would be
    /// 876,000 hourly points, so a timeline defaults to the recent past instead.
    static let defaultHourlyWindow: Int64 = 7 * 24
    static let defaultDailyWindow: Int64 = 90 * 24

    var clock: WallClock

    /// nil: answered in the request's next round (`StoreSlot.plays(track:in:round:receivedAt:)`).
    func trackPlays(_ trackID: Int64, _ query: [(name: String, value: String)], store: StoreSlot, round: Int,
                    receivedAt: ContinuousClock.Instant) throws -> [UInt8]? {
        let range = try rangeOnly(query)
        guard let (plays, freshness) = try store.plays(track: trackID, in: range, round: round, receivedAt: receivedAt) else { return nil }
        return trackAnswer(trackID, freshness: freshness) { writeCounts(plays, into: &$0) }
    }

    /// One track's answer over `from`/`to`: `read` in one snapshot, then an object of the
    /// track id, what `write` adds and the freshness of that snapshot.
    func rangeAnswer<Answer>(_ trackID: Int64, _ query: [(name: String, value: String)], store: StoreSlot, capacity: Int = 256,
                             read: (CounterReader, HourRange) throws -> Answer,
                             write: (Answer, inout JSONWriter) -> Void) throws -> [UInt8] {
        let range = try rangeOnly(query)
        // Freshness is the one the answer was read with, from the same snapshots.
        let (answer, freshness) = try store.read { try read($0, range) }
        return trackAnswer(trackID, capacity: capacity, freshness: freshness) { write(answer, &$0) }
    }

    /// The range of a query that may have `from` and `to` and nothing else.
    func rangeOnly(_ query: [(name: String, value: String)]) throws -> HourRange {
        try QueryValues(query, allowed: QueryValues.rangeParameters).hourRange()
    }

    /// `{"track_id":…, what `write` adds, "freshness":{…}}`.
    func trackAnswer(_ trackID: Int64, capacity: Int = 256, freshness: Freshness, _ write: (inout JSONWriter) -> Void) -> [UInt8] {
        var json = JSONWriter(capacity: capacity)
        json.beginObject()
        json.key("track_id"); json.value(trackID)
        write(&json)
        writeFreshness(freshness, into: &json)
        json.endObject()
        return json.bytes
    }

    func timeline(_ trackID: Int64, _ query: [(name: String, value: String)], store: StoreSlot) throws -> [UInt8] {
        let values = try QueryValues(query, allowed: QueryValues.stepParameters)
        let step = try timelineStep(values)
        let range = try timelineRange(values, step: step)
        let (points, freshness) = try store.read { try $0.timeline(track: trackID, in: range, step: step) }
        return timelineAnswer(trackID, step: step, range: range, points: points, freshness: freshness) { point, json in
            json.key("start"); json.value(point.start)
            json.key("plays"); json.value(point.plays)
            json.key("source"); json.value(point.source.rawValue)
        }
    }

    /// `{"track_id":…,"step":…,"from":…,"to":…,"points":[…],"freshness":{…}}`: the shape of
    /// every timeline answer, each point an object whose members `point` writes.
    func timelineAnswer<Point>(_ trackID: Int64, step: TimelineStep, range: HourRange, points: [Point], freshness: Freshness,
                               _ point: (Point, inout JSONWriter) -> Void) -> [UInt8] {
        var json = JSONWriter(capacity: 64 + points.count * 72)
        json.beginObject()
        json.key("track_id"); json.value(trackID)
        json.key("step"); json.value(step.rawValue)
        json.key("from"); json.value(range.lower)
        json.key("to"); json.value(range.upper)
        json.key("points")
        json.beginArray()
        for each in points {
            json.beginObject()
            point(each, &json)
            json.endObject()
        }
        json.endArray()
        writeFreshness(freshness, into: &json)
        json.endObject()
        return json.bytes
    }

    /// The timeline's `step`: `hour` (the default) or `day`.
    func timelineStep(_ values: QueryValues) throws(APIError) -> TimelineStep {
        guard let text = values["step"] else { return .hour }
        guard let step = TimelineStep(rawValue: text) else {
            throw APIError.badRequest("invalid_step", "'step' must be 'hour' or 'day', not '\(QueryValues.printable(text))'")
        }
        return step
    }

    /// The timeline's range: defaults to a recent window, widened to whole days for
    /// `step=day` (a day bucket is a UTC day), and at most `maxTimelinePoints` buckets.
    func timelineRange(_ values: QueryValues, step: TimelineStep) throws(APIError) -> HourRange {
        let endOfCurrentHour = Hour(epochMilliseconds: clock.epochMilliseconds()).advanced(by: 1)
        let window = step == .hour ? Self.defaultHourlyWindow : Self.defaultDailyWindow
        let requestedTo = try values.hour(named: "to")
        let to = requestedTo ?? endOfCurrentHour
        let from = try values.hour(named: "from") ?? to.advanced(by: -window)
        guard from <= to else {
            let toText = requestedTo == nil ? "\(to), the default" : "\(to)"
            throw APIError.badRequest("invalid_range", "'from' (\(from)) is after 'to' (\(toText))")
        }
        var range = HourRange(from, to).clamped(to: .allTime)
        if step == .day {
            let lastDayStart = range.upper.advanced(by: -1).startOfDay
            range = HourRange(range.lower.startOfDay, range.isEmpty ? range.lower.startOfDay : lastDayStart.advanced(by: 24))
        }
        let points = range.count / step.hours
        guard points <= Self.maxTimelinePoints else {
            throw APIError.badRequest(
                "range_too_large",
                "the range holds \(points) \(step.rawValue) buckets; at most \(Self.maxTimelinePoints) per answer — narrow 'from'/'to'" +
                    (step == .hour ? " or use step=day" : ""))
        }
        return range
    }

    func multiPlays(_ query: [(name: String, value: String)], store: StoreSlot) throws -> [UInt8] {
        let values = try QueryValues(query, allowed: QueryValues.multiTrackParameters)
        guard let list = values["track_id"], !list.isEmpty else {
            throw APIError.badRequest("missing_track_id", "'track_id' is required: a comma-separated list of up to \(Self.maxTracksPerRequest) track ids")
        }
        var trackIDs: [Int64] = []
        for (position, part) in list.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).enumerated() {
            guard trackIDs.count < Self.maxTracksPerRequest else {
                throw APIError.badRequest("too_many_track_ids", "at most \(Self.maxTracksPerRequest) track ids per request")
            }
            guard let trackID = QueryValues.trackID(part) else {
                throw APIError.badRequest(
                    "invalid_track_id",
                    "track id #\(position + 1) must be an integer between 1 and \(EventLimits.maxTrackID)")
            }
            trackIDs.append(trackID)
        }
        let range = try values.hourRange()
        let (answers, freshness) = try store.read { try $0.plays(tracks: trackIDs, in: range) }
        return trackList(answers, freshness)
    }

    func top(_ query: [(name: String, value: String)], store: StoreSlot) throws -> [UInt8] {
        let values = try QueryValues(query, allowed: QueryValues.rankingParameters)
        let limit = try values.integer(named: "limit", default: 10, range: 1...Self.maxTopLimit)
        let range = try values.hourRange()
        // Ranked from the same snapshots as every other answer: a batch commit or a flush
        // shows in the next ranking, at most the snapshot age later.
        let (tracks, freshness) = try store.read { try $0.top(in: range, limit: limit) }
        return trackList(tracks, freshness)
    }

    /// `{"tracks":[…],"freshness":{…}}`, the shape of the multi-get and top-N answers.
    private func trackList(_ tracks: some Collection<TrackPlays>, _ freshness: Freshness) -> [UInt8] {
        var json = JSONWriter(capacity: 64 + tracks.count * 80)
        json.beginObject()
        json.key("tracks")
        json.beginArray()
        for track in tracks {
            json.beginObject()
            write(track, into: &json)
            json.endObject()
        }
        json.endArray()
        writeFreshness(freshness, into: &json)
        json.endObject()
        return json.bytes
    }

    private func write(_ plays: TrackPlays, into json: inout JSONWriter) {
        json.key("track_id"); json.value(plays.trackID)
        writeCounts(plays, into: &json)
    }

    private func writeCounts(_ plays: TrackPlays, into json: inout JSONWriter) {
        json.key("plays"); json.value(plays.plays)
        json.key("batch_plays"); json.value(plays.batchPlays)
        json.key("realtime_plays"); json.value(plays.realtimePlays)
    }

    func writeFreshness(_ freshness: Freshness, into json: inout JSONWriter) {
        json.key("freshness")
        json.beginObject()
        json.key("batch_covered_until"); json.optional(freshness.batchCoveredUntil) { $0.value($1) }
        json.key("realtime_flushed_at"); json.optional(freshness.realtimeFlushedAt) { $0.time(epochMilliseconds: $1) }
        json.key("realtime_lag_events"); json.optional(freshness.realtimeLagEvents) { $0.value($1) }
        json.key("replica_lag_ms"); json.optional(freshness.standbyLagMilliseconds) { $0.value($1) }
        json.endObject()
    }
}
