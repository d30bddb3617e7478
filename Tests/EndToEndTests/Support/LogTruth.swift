import Foundation
import Programs

/// The counts a correct batch must produce, computed by the test itself from the NDJSON files
/// with `JSONSerialization` and a few lines of rules (docs/event-format.md) — deliberately naive and
/// independent of the product's parser, so that the two can disagree.
struct LogTruth {
    static let millisecondsPerHour: Int64 = 3_600_000
    static let maxEventBytes = 65_536
    static let maxTrackID: Int64 = 9_007_199_254_740_991

    /// Non-blank lines.
    var linesRead = 0
    /// Lines that are valid events, duplicates included.
    var valid = 0
    var duplicates = 0
    var tooLarge = 0
    var rejected: Int { linesRead - valid }
    /// Distinct plays: [track: [hour index since epoch: plays]].
    var plays: [Int64: [Int64: Int]] = [:]
    /// Every signal's net count of the distinct events (SPEC §11; plays too):
    /// [track: [hour index since epoch: [signal: count]]].
    var signals: [Int64: [Int64: [String: Int]]] = [:]
    /// Net comments per waveform bucket, of the distinct comments and deletions with a position
    /// and a duration (SPEC §11): [track: [hour index since epoch: [bucket: count]]].
    var commentBuckets: [Int64: [Int64: [Int: Int]]] = [:]
    /// Every signal's net count of the distinct events that named a creator (SPEC §11), over
    /// every hour: [creator: [signal: count]], and by track: [creator: [track: [signal: count]]].
    var creatorSignals: [Int64: [String: Int]] = [:]
    var creatorTracks: [Int64: [Int64: [String: Int]]] = [:]
    /// Distinct valid events of every type.
    var counted = 0
    /// The same per hour index since epoch.
    var countedByHour: [Int64: Int] = [:]

    /// Distinct valid events of every type in the hours [from, to): what a batch over them counts.
    func counted(hours: Range<Int64>) -> Int {
        countedByHour.reduce(0) { hours.contains($1.key) ? $0 + $1.value : $0 }
    }
    /// Distinct listener ids of the distinct plays: [track: [day index since epoch: listeners]].
    var listeners: [Int64: [Int64: Set<Int64>]] = [:]
    /// The same by hour: [track: [hour index since epoch: listeners]].
    var listenersByHour: [Int64: [Int64: Set<Int64>]] = [:]
    /// Distinct plays without a listener id, per track.
    var playsWithoutListener: [Int64: Int] = [:]

    /// The (track, hour)s with a count that is not 0: the batch's rows.
    var rows: Int { signals.values.reduce(0) { $0 + $1.values.filter { $0.values.contains { $0 != 0 } }.count } }

    /// Whether the batch store keeps a row for (track, hour): a signal's count is not 0, or a
    /// bucket of its comments' waveform is not (a comment and a deletion elsewhere on it).
    func hasStoredRow(_ track: Int64, hour: Int64) -> Bool {
        signals[track]?[hour]?.values.contains { $0 != 0 } == true || commentBuckets[track]?[hour]?.values.contains { $0 != 0 } == true
    }
    var trackIDs: [Int64] { plays.keys.sorted() }

    /// Reads every `*.ndjson` file under `root`, and every `*.ndjson.gz` (as the archiver leaves
    /// closed hours) through the system's `gzip -dc`.
    init(logs root: URL) throws {
        var seen = Set<String>()
        let files = (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? [])
            .filter { $0.lastPathComponent.hasSuffix(".ndjson") || $0.lastPathComponent.hasSuffix(".ndjson.gz") }
            .sorted { $0.path < $1.path }
        for file in files {
            let data = file.pathExtension == "gz" ? try Self.gunzip(file) : try Data(contentsOf: file)
            data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                var start = 0
                while start < buffer.count {
                    let rest = buffer.count - start
                    let end: Int
                    if let found = memchr(buffer.baseAddress! + start, 0x0A, rest) {
                        end = buffer.baseAddress!.distance(to: UnsafeRawPointer(found))
                    } else {
                        end = buffer.count
                    }
                    let line = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
                    start = end + 1
                    consider(line, seen: &seen)
                }
            }
        }
    }

    private mutating func consider(_ line: UnsafeRawBufferPointer, seen: inout Set<String>) {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        linesRead += 1
        if line.count > Self.maxEventBytes {
            tooLarge += 1
            return
        }
        guard let event = Self.validEvent(Data(line)) else { return }
        valid += 1
        let hour = event.occurredAt / Self.millisecondsPerHour
        guard seen.insert("\(hour) \(event.id)").inserted else {
            duplicates += 1
            return
        }
        counted += 1
        countedByHour[hour, default: 0] += 1
        let (signal, weight) = Self.signalAndWeight[event.type]!
        signals[event.trackID, default: [:]][hour, default: [:]][signal, default: 0] += weight
        if let creator = event.creator {
            creatorSignals[creator, default: [:]][signal, default: 0] += weight
            creatorTracks[creator, default: [:]][event.trackID, default: [:]][signal, default: 0] += weight
        }
        if signal == "comments", let position = event.position, let duration = event.duration {
            commentBuckets[event.trackID, default: [:]][hour, default: [:]][DimensionTruth.bucket(position, duration), default: 0] += weight
        }
        guard event.type == "play" else { return }
        plays[event.trackID, default: [:]][hour, default: 0] += 1
        if let listener = event.listener {
            listeners[event.trackID, default: [:]][hour / 24, default: []].insert(listener)
            listenersByHour[event.trackID, default: [:]][hour, default: []].insert(listener)
        } else {
            playsWithoutListener[event.trackID, default: 0] += 1
        }
    }

    /// The distinct listeners of one track's plays, over every day or over one.
    func listeners(of track: Int64, day: Int64? = nil) -> Int {
        let days = listeners[track] ?? [:]
        if let day { return days[day]?.count ?? 0 }
        return days.values.reduce(into: Set<Int64>()) { $0.formUnion($1) }.count
    }

    /// The distinct listeners of one track's plays in the hours [from, to).
    func listeners(of track: Int64, hours: Range<Int64>) -> Int {
        (listenersByHour[track] ?? [:]).reduce(into: Set<Int64>()) { if hours.contains($1.key) { $0.formUnion($1.value) } }.count
    }

    static func gunzip(_ file: URL) throws -> Data {
        let outcome = try Program.runBlocking("/bin/gzip", ["-dc", file.path])
        guard outcome.status == 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: file.path]) }
        return Data(outcome.output)
    }

    /// Plays of one track in the hours [from, to).
    func plays(of track: Int64, hours: Range<Int64>) -> Int {
        (plays[track] ?? [:]).reduce(0) { hours.contains($1.key) ? $0 + $1.value : $0 }
    }

    func plays(of track: Int64) -> Int {
        (plays[track] ?? [:]).values.reduce(0, +)
    }

    /// The most played tracks in the hours, most first, ties by ascending id, no zeros.
    func top(hours: Range<Int64>, limit: Int) -> [(track: Int64, plays: Int)] {
        plays.keys.map { (track: $0, plays: plays(of: $0, hours: hours)) }
            .filter { $0.plays > 0 }
            .sorted { $0.plays != $1.plays ? $0.plays > $1.plays : $0.track < $1.track }
            .prefix(limit).map { $0 }
    }

    // MARK: The rules of docs/event-format.md, written out plainly.

    /// Each type's signal and weight (SPEC §11), written out.
    static let signalAndWeight: [String: (String, Int)] = [
        "play": ("plays", 1), "download": ("downloads", 1), "like": ("likes", 1), "unlike": ("likes", -1),
        "repost": ("reposts", 1), "unrepost": ("reposts", -1), "comment": ("comments", 1), "comment_deleted": ("comments", -1),
    ]

    /// Net count of `signal` of one track in the hours [from, to).
    func count(_ signal: String, of track: Int64, hours: Range<Int64>) -> Int {
        (signals[track] ?? [:]).reduce(0) { hours.contains($1.key) ? $0 + ($1.value[signal] ?? 0) : $0 }
    }

    struct Event {
        var id: String
        var type: String
        var trackID: Int64
        var occurredAt: Int64
        var position: Int64?
        var duration: Int64?
        var client: String?
        var country: String?
        var listener: Int64?
        var creator: Int64?
    }

    static func validEvent(_ line: Data) -> Event? {
        guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else { return nil }
        guard let id = object["event_id"] as? String, (1...64).contains(id.utf8.count),
              id.utf8.allSatisfy({ isIDByte($0) }) else { return nil }
        guard let type = object["type"] as? String, signalAndWeight[type] != nil else { return nil }
        var creator: Int64?
        if let value = object["creator_id"], !(value is NSNull) {
            guard let id = integer(value), (1...maxTrackID).contains(id) else { return nil }
            creator = id
        }
        guard let trackID = integer(object["track_id"]), (1...maxTrackID).contains(trackID) else { return nil }
        let occurredAt: Int64
        if let text = object["occurred_at"] as? String {
            guard let milliseconds = parseTimestamp(text) else { return nil }
            occurredAt = milliseconds
        } else if let milliseconds = integer(object["occurred_at"]) {
            occurredAt = milliseconds
        } else {
            return nil
        }
        guard occurredAt >= 946_684_800_000, occurredAt < 4_102_444_800_000 else { return nil }
        var numbers: [String: Int64] = [:]
        for (name, minimum) in [("listener_id", Int64(0)), ("position_ms", 0), ("duration_ms", 1)] {
            if let value = object[name], !(value is NSNull) {
                guard let number = integer(value), number >= minimum else { return nil }
                numbers[name] = number
            }
        }
        var texts: [String: String] = [:]
        for name in ["client", "country"] {
            if let value = object[name], !(value is NSNull) {
                guard let text = value as? String, text.utf8.count <= 32 else { return nil }
                texts[name] = text
            }
        }
        return Event(id: id, type: type, trackID: trackID, occurredAt: occurredAt, position: numbers["position_ms"],
                     duration: numbers["duration_ms"], client: texts["client"], country: texts["country"],
                     listener: numbers["listener_id"], creator: creator)
    }

    private static func isIDByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x5F || byte == 0x2D
    }

    /// A JSON integer: a number written without fraction or exponent.
    private static func integer(_ value: Any?) -> Int64? {
        guard let number = value as? NSNumber, !(value is String) else { return nil }
        let text = number.stringValue
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) else { return nil }
        return Int64(text)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00)` → epoch milliseconds.
    static func parseTimestamp(_ text: String) -> Int64? {
        let characters = Array(text.utf8)
        guard characters.count >= 20 else { return nil }
        func digits(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= characters.count else { return nil }
            var value = 0
            for index in range {
                guard characters[index] >= 0x30, characters[index] <= 0x39 else { return nil }
                value = value * 10 + Int(characters[index] - 0x30)
            }
            return value
        }
        guard let year = digits(0..<4), characters[4] == 0x2D, let month = digits(5..<7), characters[7] == 0x2D,
              let day = digits(8..<10), characters[10] == 0x54, let hour = digits(11..<13), characters[13] == 0x3A,
              let minute = digits(14..<16), characters[16] == 0x3A, let second = digits(17..<19) else { return nil }
        var index = 19
        var milliseconds = 0
        if characters[index] == 0x2E {
            index += 1
            let fractionStart = index
            while index < characters.count, characters[index] >= 0x30, characters[index] <= 0x39 { index += 1 }
            guard index > fractionStart else { return nil }
            let fraction = characters[fractionStart..<min(index, fractionStart + 3)].map { Int($0 - 0x30) }
            milliseconds = (fraction + Array(repeating: 0, count: 3 - fraction.count)).reduce(0) { $0 * 10 + $1 }
        }
        let zone = String(decoding: characters[index...], as: UTF8.self)
        guard zone == "Z" || zone == "+00:00" else { return nil }
        let daysInMonth = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...daysInMonth[month - 1]).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        let seconds = Int64(daysSinceEpoch(year: year, month: month, day: day)) * 86_400
            + Int64(hour * 3_600 + minute * 60 + second)
        return seconds * 1_000 + Int64(milliseconds)
    }

    private static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// Days from 1970-01-01, counted the slow and obvious way.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        var days = 0
        for earlierYear in 1970..<year { days += isLeap(earlierYear) ? 366 : 365 }
        let daysInMonth = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        days += daysInMonth.prefix(month - 1).reduce(0, +)
        return days + day - 1
    }
}

/// Hour indices and RFC 3339 text for the test's fixed dates.
enum Hours {
    /// `2026-11-20T00:00:00Z` plus `offset` hours, as an hour index since the epoch.
    static func index(_ year: Int, _ month: Int, _ day: Int, hour: Int = 0) -> Int64 {
        Int64(LogTruth.daysSinceEpoch(year: year, month: month, day: day)) * 24 + Int64(hour)
    }

    static func text(_ hourIndex: Int64) -> String {
        var days = Int(hourIndex / 24)
        let hour = Int(hourIndex % 24)
        var year = 1970
        while true {
            let length = (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 366 : 365
            if days < length { break }
            days -= length
            year += 1
        }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        var month = 0
        while days >= daysInMonth[month] {
            days -= daysInMonth[month]
            month += 1
        }
        return String(format: "%04d-%02d-%02dT%02d:00:00Z", year, month + 1, days + 1, hour)
    }
}
