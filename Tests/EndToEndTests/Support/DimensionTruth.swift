import Foundation
import Testing

/// The waveform histograms and breakdowns the reader must answer, computed by the test from the
/// NDJSON files with `LogTruth`'s plain rules (docs/event-format.md) and docs/openapi.yaml's formula in `Decimal`
/// arithmetic — independent of the product's parser, aggregation and encoding.
struct DimensionTruth {
    /// What the plays of some (track, hour)s say.
    struct Tally: Equatable {
        var plays = 0
        var waveform = [Int](repeating: 0, count: 100)
        var withoutPosition = 0
        var countries: [String?: Int] = [:]
        var clients: [String?: Int] = [:]

        mutating func add(_ event: LogTruth.Event) {
            plays += 1
            if let position = event.position, let duration = event.duration {
                waveform[DimensionTruth.bucket(position, duration)] += 1
            } else {
                withoutPosition += 1
            }
            countries[event.country, default: 0] += 1
            clients[event.client, default: 0] += 1
        }

        mutating func add(_ other: Tally) {
            plays += other.plays
            for index in 0..<100 { waveform[index] += other.waveform[index] }
            withoutPosition += other.withoutPosition
            countries.merge(other.countries, uniquingKeysWith: +)
            clients.merge(other.clients, uniquingKeysWith: +)
        }

        /// docs/openapi.yaml's order: plays descending, then value by UTF-8 bytes, null last.
        func breakdown(by field: String) -> [(value: String?, plays: Int)] {
            let counts = field == "country" ? countries : clients
            let named = counts.compactMap { key, plays in key.map { (value: $0, plays: plays) } }
                .sorted { $0.plays != $1.plays ? $0.plays > $1.plays : Array($0.value.utf8).lexicographicallyPrecedes(Array($1.value.utf8)) }
            var entries: [(value: String?, plays: Int)] = named.map { ($0.value, $0.plays) }
            if let nulls = counts[nil] { entries.append((nil, nulls)) }
            return entries
        }
    }

    /// De-duplicated by (hour, event_id), as the batch counts: [track: [hour: tally]].
    var exact: [Int64: [Int64: Tally]] = [:]
    /// Every valid copy, as the realtime layer counts.
    var everyCopy: [Int64: [Int64: Tally]] = [:]

    init(logs root: URL) throws {
        var seen = Set<String>()
        let files = (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? []).filter { $0.lastPathComponent.hasSuffix(".ndjson") }
        for file in files {
            for line in try Data(contentsOf: file).split(separator: 0x0A) where line.count <= LogTruth.maxEventBytes {
                guard let event = LogTruth.validEvent(Data(line)), event.type == "play" else { continue }
                let hour = event.occurredAt / LogTruth.millisecondsPerHour
                everyCopy[event.trackID, default: [:]][hour, default: Tally()].add(event)
                if seen.insert("\(hour) \(event.id)").inserted {
                    exact[event.trackID, default: [:]][hour, default: Tally()].add(event)
                }
            }
        }
    }

    /// `min(99, ⌊100 × position / duration⌋)` in decimal arithmetic.
    static func bucket(_ position: Int64, _ duration: Int64) -> Int {
        var quotient = Decimal(position) * 100 / Decimal(duration)
        var floored = Decimal()
        NSDecimalRound(&floored, &quotient, 0, .down)
        return floored >= 99 ? 99 : NSDecimalNumber(decimal: floored).intValue
    }

    /// The merged tally of `track` over `hours`: exact in `covered`, every copy elsewhere.
    func tally(_ track: Int64, hours: Range<Int64>, covered: Range<Int64>) -> Tally {
        var total = Tally()
        for hour in hours {
            let source = covered.contains(hour) ? exact : everyCopy
            if let tally = source[track]?[hour] { total.add(tally) }
        }
        return total
    }

    /// Asks the server for `track`'s waveform and both breakdowns over `hours` and compares them.
    static func check(_ server: Server, track: Int64, hours: Range<Int64>, expected: Tally,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let query = "from=\(Hours.text(hours.lowerBound))&to=\(Hours.text(hours.upperBound))"
        let waveform = try server.json("/v1/tracks/\(track)/waveform?\(query)")
        let context = Comment(rawValue: "track \(track), hours \(Hours.text(hours.lowerBound)) ..< \(Hours.text(hours.upperBound))")
        #expect((waveform["buckets"] as? [Any])?.map { int($0) } == expected.waveform, context, sourceLocation: sourceLocation)
        #expect(int(waveform["plays"]) == expected.plays, context, sourceLocation: sourceLocation)
        #expect(int(waveform["plays_without_position"]) == expected.withoutPosition, context, sourceLocation: sourceLocation)
        #expect(waveform["freshness"] is [String: Any], context, sourceLocation: sourceLocation)
        for field in ["country", "client"] {
            let breakdown = try server.json("/v1/tracks/\(track)/breakdown?by=\(field)&\(query)")
            #expect(breakdown["by"] as? String == field, context, sourceLocation: sourceLocation)
            let values = (breakdown["values"] as? [[String: Any]] ?? []).map { entry in
                (value: entry["value"] as? String, isNull: entry["value"] is NSNull, plays: int(entry["plays"]))
            }
            let wanted = expected.breakdown(by: field)
            #expect(values.map { $0.isNull ? "<null>" : $0.value ?? "<missing>" } == wanted.map { $0.value ?? "<null>" },
                    context, sourceLocation: sourceLocation)
            #expect(values.map(\.plays) == wanted.map(\.plays), context, sourceLocation: sourceLocation)
        }
    }
}
