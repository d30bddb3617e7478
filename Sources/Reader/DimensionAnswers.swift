import CounterpointCore
import CounterStore
import HTTPServer

/// The dimension endpoints of docs/openapi.yaml: where on the waveform plays start, and plays by
/// country or client. Same parameters, errors and freshness as the count endpoints; the plays
/// they split are the track's merged plays, read from the same snapshots.
struct DimensionAnswers {
    let counts: CountAnswers

    func waveform(_ subject: Subject, _ query: [(name: String, value: String)], store: StoreSlot) throws -> [UInt8] {
        try counts.rangeAnswer(subject, query, store: store, capacity: 256 + WaveformBucket.count * 8,
                               read: { try $0.dimensions(subject, in: $1) }) { answer, json in
            json.key("buckets")
            json.beginArray()
            for plays in answer.waveform { json.value(plays) }
            json.endArray()
            json.key("plays"); json.value(answer.plays.plays)
            json.key("plays_without_position"); json.value(answer.playsWithoutPosition)
        }
    }

    func breakdown(_ subject: Subject, _ query: [(name: String, value: String)], accept: String?, store: StoreSlot) throws -> HTTPResponse {
        let values = try QueryValues(query, allowed: QueryValues.breakdownParameters)
        let format = try ListFormat(values, accept: accept)
        let section: DimensionEncoding.Section
        switch values["by"] {
        case "country": section = .country
        case "client": section = .client
        case nil:
            throw APIError.badRequest("missing_by", "'by' is required: 'country' or 'client'")
        case let other?:
            throw APIError.badRequest("invalid_by", "'by' must be 'country' or 'client', not '\(QueryValues.printable(other))'")
        }
        let by = section == .country ? "country" : "client"
        let range = try values.hourRange()
        let (answer, freshness) = try store.read { try $0.dimensions(subject, in: range) }
        let entries = answer.breakdown(section)
        return listResponse(format, rows: entries, columns: Self.breakdownColumns,
                            filename: "\(subject.kind)-\(subject.id)-plays-by-\(by)-\(fileNameRange(range))") { json in
            json.beginObject()
            json.id(subject)
            json.key("by"); json.value(by)
            json.key("values"); json.rows(entries, Self.breakdownColumns)
            counts.writeFreshness(freshness, into: &json)
            json.endObject()
        }
    }

    static let breakdownColumns: [Column<(value: DimensionValue?, plays: Int64)>] = [
        Column("value") { $0.value.map { .text($0.string) } ?? .null },
        Column("plays") { .integer($0.plays) },
    ]
}
