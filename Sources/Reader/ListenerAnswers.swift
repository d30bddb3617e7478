import CounterpointCore
import CounterStore

/// The listener endpoints of docs/openapi.yaml (docs/listeners.md): distinct listeners of a
/// track over a range, and per bucket. Same parameters, errors and freshness as the count
/// endpoints; `exact` says whether a number is a count or an estimate.
struct ListenerAnswers {
    let counts: CountAnswers

    func total(_ trackID: Int64, _ query: [(name: String, value: String)], store: StoreSlot) throws -> [UInt8] {
        try counts.rangeAnswer(trackID, query, store: store, read: { try $0.listeners(track: trackID, in: $1) }) { answer, json in
            json.key("listeners"); json.value(answer.listeners)
            json.key("exact"); json.value(answer.exact)
            json.key("plays"); json.value(answer.plays.plays)
            json.key("plays_without_listener"); json.value(answer.playsWithoutListener)
        }
    }

    func timeline(_ trackID: Int64, _ query: [(name: String, value: String)], store: StoreSlot) throws -> [UInt8] {
        let values = try QueryValues(query, allowed: QueryValues.stepParameters)
        let step = try counts.timelineStep(values)
        let range = try counts.timelineRange(values, step: step)
        let (points, freshness) = try store.read { try $0.listenerTimeline(track: trackID, in: range, step: step) }
        return counts.timelineAnswer(trackID, step: step, range: range, points: points, freshness: freshness) { point, json in
            json.key("start"); json.value(point.start)
            json.key("listeners"); json.value(point.listeners)
            json.key("exact"); json.value(point.exact)
            json.key("source"); json.value(point.source.rawValue)
        }
    }
}
