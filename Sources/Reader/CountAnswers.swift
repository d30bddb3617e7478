import CounterpointCore
import CounterStore
import HTTPServer
import Runtime

/// The count endpoints of docs/openapi.yaml: each turns validated parameters into store queries and
/// renders the answer. They return bytes — or, for a list, a response in the form asked for
/// (`ListFormat`) — and throw `APIError` for bad input (store failures propagate and become
/// 503 one level up).
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

    /// nil: answered in the request's next round (`StoreSlot.plays(_:in:round:receivedAt:)`).
    func plays(_ subject: Subject, _ query: [(name: String, value: String)], store: StoreSlot, round: Int,
               receivedAt: ContinuousClock.Instant) throws -> [UInt8]? {
        let range = try rangeOnly(query)
        guard let (plays, freshness) = try store.plays(subject, in: range, round: round, receivedAt: receivedAt) else { return nil }
        return subjectAnswer(subject, freshness: freshness) { writeCounts(plays, into: &$0) }
    }

    /// One subject's answer over `from`/`to`: `read` in one snapshot, then an object of the
    /// subject's id, what `write` adds and the freshness of that snapshot.
    func rangeAnswer<Answer>(_ subject: Subject, _ query: [(name: String, value: String)], store: StoreSlot, capacity: Int = 256,
                             read: (CounterReader, HourRange) throws -> Answer,
                             write: (Answer, inout JSONWriter) -> Void) throws -> [UInt8] {
        let range = try rangeOnly(query)
        // Freshness is the one the answer was read with, from the same snapshots.
        let (answer, freshness) = try store.read { try read($0, range) }
        return subjectAnswer(subject, capacity: capacity, freshness: freshness) { write(answer, &$0) }
    }

    /// The range of a query that may have `from` and `to` and nothing else.
    func rangeOnly(_ query: [(name: String, value: String)]) throws -> HourRange {
        try QueryValues(query, allowed: QueryValues.rangeParameters).hourRange()
    }

    /// `{"track_id":…, what `write` adds, "freshness":{…}}` (`creator_id` for a creator).
    func subjectAnswer(_ subject: Subject, capacity: Int = 256, freshness: Freshness, _ write: (inout JSONWriter) -> Void) -> [UInt8] {
        var json = JSONWriter(capacity: capacity)
        json.beginObject()
        json.id(subject)
        write(&json)
        writeFreshness(freshness, into: &json)
        json.endObject()
        return json.bytes
    }

    func timeline(_ subject: Subject, _ query: [(name: String, value: String)], accept: String?, store: StoreSlot) throws -> HTTPResponse {
        let values = try QueryValues(query, allowed: QueryValues.signalStepParameters)
        let format = try ListFormat(values, accept: accept)
        // An answer names its signal when the request did; without `signal` it is the plays'
        // timeline, byte for byte as before the other signals.
        let named = try values.signal()
        let signal = named ?? .plays
        let step = try timelineStep(values)
        let range = try timelineRange(values, step: step)
        let (points, freshness) = try store.read { try $0.timeline(subject, in: range, step: step, signal: signal) }
        return timelineAnswer(subject, format, signal.rawValue, signal: named, step: step, range: range, points: points,
                              columns: Self.timelineColumns[signal.ordinal], freshness: freshness)
    }

    /// Per signal: a point's start, the signal's count under the signal's name, and its source.
    static let timelineColumns: [[Column<TimelinePoint>]] = Signal.allCases.map { signal in
        [
            Column("start") { .hour($0.start) },
            Column(signal.rawValue) { .integer($0.count) },
            Column("source") { .text($0.source.rawValue) },
        ]
    }

    /// `{"track_id":…,"signal":…,"step":…,"from":…,"to":…,"points":[…],"freshness":{…}}`, the
    /// shape of every timeline answer (`creator_id` for a creator; `signal` for a signal's
    /// timeline only), or its points as CSV (`track-1-plays-by-hour-<range>.csv`).
    func timelineAnswer<Point>(_ subject: Subject, _ format: ListFormat, _ what: String, signal: Signal? = nil, step: TimelineStep,
                               range: HourRange, points: [Point], columns: [Column<Point>], freshness: Freshness) -> HTTPResponse {
        listResponse(format, rows: points, columns: columns,
                     filename: "\(subject.kind)-\(subject.id)-\(what)-by-\(step.rawValue)-\(fileNameRange(range))") { json in
            json.beginObject()
            json.id(subject)
            if let signal { json.key("signal"); json.value(signal.rawValue) }
            json.key("step"); json.value(step.rawValue)
            json.key("from"); json.value(range.lower)
            json.key("to"); json.value(range.upper)
            json.key("points"); json.rows(points, columns)
            writeFreshness(freshness, into: &json)
            json.endObject()
        }
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

    func multiPlays(_ query: [(name: String, value: String)], accept: String?, store: StoreSlot) throws -> HTTPResponse {
        let values = try QueryValues(query, allowed: QueryValues.multiTrackParameters)
        let format = try ListFormat(values, accept: accept)
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
        return subjectList(.track, answers, format, filename: "tracks-plays-\(fileNameRange(range))", freshness)
    }

    /// `/v1/top` (tracks) and `/v1/creators/top` (creators).
    func top(_ kind: SubjectKind, _ query: [(name: String, value: String)], accept: String?, store: StoreSlot) throws -> HTTPResponse {
        let values = try QueryValues(query, allowed: QueryValues.rankingParameters)
        let format = try ListFormat(values, accept: accept)
        let named = try values.signal()
        let signal = named ?? .plays
        let limit = try values.integer(named: "limit", default: 10, range: 1...Self.maxTopLimit)
        let range = try values.hourRange()
        // Ranked from the same snapshots as every other answer: a batch commit or a flush
        // shows in the next ranking, at most the snapshot age later.
        let (ranked, freshness) = try store.read { try $0.top(kind, in: range, limit: limit, signal: signal) }
        return subjectList(kind, ranked, format, signal: named, columnsOf: signal,
                           filename: "top-\(kind.plural)-\(signal.rawValue)-\(fileNameRange(range))", freshness)
    }

    /// A creator's tracks ranked by a signal among the events that named the creator, each with
    /// every signal's net count (SPEC §11): `{"creator_id":7,"signal":"plays","tracks":[{"track_id":1,
    /// "plays":30,"downloads":1,…}],"freshness":{…}}`, or the tracks as CSV
    /// (`creator-7-tracks-by-plays-<range>.csv`).
    func creatorTracks(_ creator: Subject, _ query: [(name: String, value: String)], accept: String?, store: StoreSlot) throws -> HTTPResponse {
        let values = try QueryValues(query, allowed: QueryValues.rankingParameters)
        let format = try ListFormat(values, accept: accept)
        let signal = try values.signal() ?? .plays
        let limit = try values.integer(named: "limit", default: 10, range: 1...Self.maxTopLimit)
        let range = try values.hourRange()
        let (tracks, freshness) = try store.read { try $0.tracks(ofCreator: creator.id, in: range, signal: signal, limit: limit) }
        return listResponse(format, rows: tracks, columns: Self.creatorTrackColumns,
                            filename: "creator-\(creator.id)-tracks-by-\(signal.rawValue)-\(fileNameRange(range))") { json in
            json.beginObject()
            json.id(creator)
            json.key("signal"); json.value(signal.rawValue)
            json.key("tracks"); json.rows(tracks, Self.creatorTrackColumns)
            writeFreshness(freshness, into: &json)
            json.endObject()
        }
    }

    /// A creator's track: its id and every signal's net count, named as the signal.
    static let creatorTrackColumns: [Column<CreatorTrack>] = [Column("track_id") { .integer($0.trackID) }]
        + Signal.allCases.map { signal in Column(signal.rawValue) { .integer($0.counts[signal]) } }

    /// Every signal's merged total of a subject with its split (SPEC §11): `{"track_id":…,
    /// "counts":{"plays":{"total":…,"batch":…,"realtime":…},…},"freshness":{…}}`, or as CSV one
    /// row per signal (`track-1-counts-<range>.csv`); `creator_id` for a creator.
    func counts(_ subject: Subject, _ query: [(name: String, value: String)], accept: String?, store: StoreSlot) throws -> HTTPResponse {
        let values = try QueryValues(query, allowed: QueryValues.listRangeParameters)
        let format = try ListFormat(values, accept: accept)
        let range = try values.hourRange()
        let (counts, freshness) = try store.read { try $0.counts(subject, in: range) }
        let rows = Signal.allCases.map { SignalRow(signal: $0, counts: counts) }
        return listResponse(format, rows: rows, columns: Self.countsColumns,
                            filename: "\(subject.kind)-\(subject.id)-counts-\(fileNameRange(range))") { json in
            json.beginObject()
            json.id(subject)
            json.key("counts")
            json.beginObject()
            for row in rows {
                json.key(dynamic: row.signal.rawValue)
                json.beginObject()
                for column in Self.countsColumns.dropFirst() {
                    json.key(identifier: column.name)
                    json.value(column.cell(row))
                }
                json.endObject()
            }
            json.endObject()
            writeFreshness(freshness, into: &json)
            json.endObject()
        }
    }

    /// One signal of a `counts` answer.
    struct SignalRow {
        var signal: Signal
        var counts: MergedCounts
    }

    /// The CSV form of `counts` (SPEC §11) and, but the first, the members of each signal's object.
    static let countsColumns: [Column<SignalRow>] = [
        Column("signal") { .text($0.signal.rawValue) },
        Column("total") { .integer($0.counts.total[$0.signal]) },
        Column("batch") { .integer($0.counts.batch[$0.signal]) },
        Column("realtime") { .integer($0.counts.realtime[$0.signal]) },
    ]

    /// Per kind, per signal: a subject's id and its merged count with each layer's part
    /// (`plays`, `batch_plays`, `realtime_plays` for plays; `likes`, `batch_likes`, … for likes).
    static let subjectColumns: [[[Column<TrackPlays>]]] = SubjectKind.allCases.map { kind in
        Signal.allCases.map { signal in
            [
                Column(kind.idField) { .integer($0.id) },
                Column(signal.rawValue) { .integer($0.plays) },
                Column("batch_\(signal.rawValue)") { .integer($0.batchPlays) },
                Column("realtime_\(signal.rawValue)") { .integer($0.realtimePlays) },
            ]
        }
    }

    static let trackPlaysColumns = subjectColumns[SubjectKind.track.rawValue][Signal.plays.ordinal]

    /// `{"signal":…,"tracks":[…],"freshness":{…}}`, the shape of the multi-get and top-N answers
    /// (`signal` in a ranking the request named one for; `creators` for creators), or its list as
    /// CSV; the members are named after `columnsOf`.
    private func subjectList(_ kind: SubjectKind, _ subjects: [TrackPlays], _ format: ListFormat, signal: Signal? = nil,
                             columnsOf: Signal = .plays, filename: @autoclosure () -> String, _ freshness: Freshness) -> HTTPResponse {
        let columns = Self.subjectColumns[kind.rawValue][columnsOf.ordinal]
        return listResponse(format, rows: subjects, columns: columns, filename: filename()) { json in
            json.beginObject()
            if let signal { json.key("signal"); json.value(signal.rawValue) }
            json.key(identifier: kind.pluralBytes); json.rows(subjects, columns)
            writeFreshness(freshness, into: &json)
            json.endObject()
        }
    }

    /// A track's `plays`, `batch_plays` and `realtime_plays`: the list items' members but the id.
    private func writeCounts(_ plays: TrackPlays, into json: inout JSONWriter) {
        for column in Self.trackPlaysColumns.dropFirst() {
            json.key(identifier: column.name)
            json.value(column.cell(plays))
        }
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
