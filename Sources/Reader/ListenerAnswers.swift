import CounterpointCore
import CounterStore
import HTTPServer

/// The listener endpoints of docs/openapi.yaml (docs/listeners.md): distinct listeners of a
/// track over a range, and per bucket. Same parameters, errors and freshness as the count
/// endpoints; `exact` says whether a number is a count or an estimate.
struct ListenerAnswers {
    let counts: CountAnswers

    func total(_ subject: Subject, _ query: [(name: String, value: String)], store: StoreSlot) throws -> [UInt8] {
        try counts.rangeAnswer(subject, query, store: store, read: { try $0.listeners(subject, in: $1) }) { answer, json in
            json.key("listeners"); json.value(answer.listeners)
            json.key("exact"); json.value(answer.exact)
            json.key("plays"); json.value(answer.plays.plays)
            json.key("plays_without_listener"); json.value(answer.playsWithoutListener)
        }
    }

    func timeline(_ subject: Subject, _ query: [(name: String, value: String)], accept: String?, store: StoreSlot) throws -> HTTPResponse {
        let values = try QueryValues(query, allowed: QueryValues.stepParameters)
        let format = try ListFormat(values, accept: accept)
        let step = try counts.timelineStep(values)
        let range = try counts.timelineRange(values, step: step)
        let (points, freshness) = try store.read { try $0.listenerTimeline(subject, in: range, step: step) }
        return counts.timelineAnswer(subject, format, "listeners", step: step, range: range, points: points,
                                     columns: Self.timelineColumns, freshness: freshness)
    }

    static let timelineColumns: [Column<ListenerPoint>] = [
        Column("start") { .hour($0.start) },
        Column("listeners") { .integer($0.listeners) },
        Column("exact") { .flag($0.exact) },
        Column("source") { .text($0.source.rawValue) },
    ]
}
