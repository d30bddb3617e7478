import Foundation

extension StatsPageStore {
    /// What the events that named each creator add up to (SPEC §11), counted by the test from the
    /// same NDJSON files as `LogTruth` and with its rules (`LogTruth.validEvent`, de-duplication by
    /// hour and `event_id`), reading `creator_id` itself: independent of the product's code.
    struct CreatorTruth {
        /// Net count of every signal: [creator: [hour index: [signal: count]]].
        private(set) var signals: [Int64: [Int64: [String: Int]]] = [:]
        /// The same per track of the creator: [creator: [track: [hour index: [signal: count]]]].
        private(set) var tracks: [Int64: [Int64: [Int64: [String: Int]]]] = [:]
        /// Distinct listeners of the plays: [creator: [hour index: listeners]].
        private(set) var listeners: [Int64: [Int64: Set<Int64>]] = [:]
        /// Plays by the value of a field (`nil`: the event did not send it):
        /// [field: [creator: [hour index: [value: plays]]]], field `country` or `client`.
        private(set) var plays: [String: [Int64: [Int64: [String?: Int]]]] = [:]

        init(logs root: URL) throws {
            let files = (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL } ?? [])
                .filter { $0.lastPathComponent.hasSuffix(".ndjson") }
                .sorted { $0.path < $1.path }
            var seen = Set<String>()
            for file in files {
                for line in try Data(contentsOf: file).split(separator: 0x0A) where line.count <= LogTruth.maxEventBytes {
                    guard let event = LogTruth.validEvent(Data(line)) else { continue }
                    let hour = event.occurredAt / LogTruth.millisecondsPerHour
                    guard seen.insert("\(hour) \(event.id)").inserted else { continue }
                    guard let creator = event.creator else { continue }
                    let (signal, weight) = LogTruth.signalAndWeight[event.type]!
                    signals[creator, default: [:]][hour, default: [:]][signal, default: 0] += weight
                    tracks[creator, default: [:]][event.trackID, default: [:]][hour, default: [:]][signal, default: 0] += weight
                    guard event.type == "play" else { continue }
                    if let listener = event.listener { listeners[creator, default: [:]][hour, default: []].insert(listener) }
                    plays["country", default: [:]][creator, default: [:]][hour, default: [:]][event.country, default: 0] += 1
                    plays["client", default: [:]][creator, default: [:]][hour, default: [:]][event.client, default: 0] += 1
                }
            }
        }

        var creatorIDs: [Int64] { signals.keys.sorted() }

        /// Net count of `signal` of a creator in the hours.
        func count(_ signal: String, of creator: Int64, hours: Range<Int64>) -> Int {
            (signals[creator] ?? [:]).reduce(0) { hours.contains($1.key) ? $0 + ($1.value[signal] ?? 0) : $0 }
        }

        func listeners(of creator: Int64, hours: Range<Int64>) -> Int {
            (listeners[creator] ?? [:]).reduce(into: Set<Int64>()) { if hours.contains($1.key) { $0.formUnion($1.value) } }.count
        }

        /// The creators with the most plays in the hours, most first, ties by ascending id, no zeros.
        func top(hours: Range<Int64>, limit: Int) -> [(creator: Int64, plays: Int)] {
            creatorIDs.map { (creator: $0, plays: count("plays", of: $0, hours: hours)) }
                .filter { $0.plays > 0 }
                .sorted { $0.plays != $1.plays ? $0.plays > $1.plays : $0.creator < $1.creator }
                .prefix(limit).map { $0 }
        }

        /// A creator's tracks with every signal's net count over the hours (of the events that
        /// named the creator), ranked by `signal`: positive counts only, most first, ties by id.
        func tracks(of creator: Int64, hours: Range<Int64>, rankedBy signal: String, limit: Int) -> [(track: Int64, counts: [String: Int])] {
            (tracks[creator] ?? [:]).map { track, byHour in
                var counts: [String: Int] = [:]
                for (hour, signals) in byHour where hours.contains(hour) {
                    for (name, value) in signals { counts[name, default: 0] += value }
                }
                return (track: track, counts: counts)
            }
            .filter { $0.counts[signal, default: 0] > 0 }
            .sorted { ($0.counts[signal] ?? 0, $1.track) > ($1.counts[signal] ?? 0, $0.track) }
            .prefix(limit).map { $0 }
        }

        /// Plays by value of `field` (`country`, `client`) as the breakdown orders them: plays
        /// descending, then value ascending by UTF-8 bytes, and `nil` last.
        func breakdown(_ field: String, of creator: Int64, hours: Range<Int64>) -> [(value: String?, plays: Int)] {
            var totals: [String?: Int] = [:]
            for (hour, values) in plays[field]?[creator] ?? [:] where hours.contains(hour) {
                for (value, count) in values { totals[value, default: 0] += count }
            }
            return totals.map { (value: $0.key, plays: $0.value) }.sorted { a, b in
                // `nil` (plays without the field) last, whatever its plays.
                guard let x = a.value else { return false }
                guard let y = b.value else { return true }
                return a.plays != b.plays ? a.plays > b.plays : Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
            }
        }
    }
}
