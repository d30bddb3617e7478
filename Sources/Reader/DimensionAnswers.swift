import CounterpointCore
import CounterStore
import HTTPServer

/// The dimension endpoints of docs/openapi.yaml: where on the waveform plays start (or comments
/// sit), and plays by country or client. Same parameters, errors and freshness as the count
/// endpoints; the plays they split are the track's merged plays, read from the same snapshots.
struct DimensionAnswers {
    let counts: CountAnswers

    /// The waveform of plays, or with `signal=comments` of comments (SPEC §11), whose members
    /// then read `comments` and `comments_without_position`. Without `signal` the answer is the
    /// plays' as before comments had a waveform, byte for byte; with it, it names the signal.
    func waveform(_ subject: Subject, _ query: [(name: String, value: String)], store: StoreSlot) throws -> [UInt8] {
        let values = try QueryValues(query, allowed: QueryValues.waveformParameters)
        let named = try Self.waveformSignal(values)
        let signal = named ?? .plays
        let range = try values.hourRange()
        let (answer, freshness) = try store.read { try $0.waveform(track: subject.id, in: range, signal: signal) }
        return counts.subjectAnswer(subject, capacity: 256 + WaveformBucket.count * 8, freshness: freshness) { json in
            if let named { json.key("signal"); json.value(named.rawValue) }
            json.key("buckets")
            json.beginArray()
            for count in answer.buckets { json.value(count) }
            json.endArray()
            if signal == .comments {
                json.key("comments"); json.value(answer.total)
                json.key("comments_without_position"); json.value(answer.withoutPosition)
            } else {
                json.key("plays"); json.value(answer.total)
                json.key("plays_without_position"); json.value(answer.withoutPosition)
            }
        }
    }

    /// `signal` of a waveform: one of the signals whose events have a place on it, nil when absent.
    static func waveformSignal(_ values: QueryValues) throws(APIError) -> Signal? {
        guard let text = values["signal"] else { return nil }
        guard let signal = Signal(named: text), TrackWaveform.signals.contains(signal) else {
            let why = Signal(named: text) == nil ? "" : ": \(text) have no place on the waveform"
            throw .badRequest("invalid_signal", "'signal' of a waveform must be "
                + TrackWaveform.signals.map { "'\($0.rawValue)'" }.joined(separator: " or ")
                + ", not '\(QueryValues.printable(text))'" + why)
        }
        return signal
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
