import CounterpointCore
import EventLogs
import Foundation
import Generator
import Scratch

extension TemporaryDirectory {
    /// Every regular file below the directory, relative path → bytes.
    func contents() throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)!
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                result[relative] = try Data(contentsOf: URL(fileURLWithPath: path + "/" + relative))
            }
        }
        return result
    }
}

/// An event as an independent docs/event-format.md check sees it (Foundation's JSON parser, not ours).
struct CheckedEvent {
    var eventID: String
    /// The `type` string, one of `eventTypeNames`.
    var type: String
    var trackID: Int64
    var occurredAtMilliseconds: Int64
    var object: [String: Any]
}

/// docs/event-format.md's eight types, written out rather than taken from `EventType`.
let eventTypeNames: Set<String> = ["play", "download", "like", "unlike", "repost", "unrepost", "comment", "comment_deleted"]

/// Validates one line against docs/event-format.md with Foundation; `nil` when it must be rejected.
func checkEvent(_ line: [UInt8]) -> CheckedEvent? {
    guard line.count <= EventLimits.maxEventBytes,
          let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any],
          let eventID = object["event_id"] as? String,
          (1...64).contains(eventID.utf8.count),
          eventID.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || isAlphanumeric($0) }),
          let type = object["type"] as? String, eventTypeNames.contains(type),
          let trackNumber = object["track_id"] as? NSNumber, let trackID = exactInteger(trackNumber),
          trackID >= 1, trackID <= EventLimits.maxTrackID,
          let occurredAt = object["occurred_at"] as? String,
          let milliseconds = parseRFC3339(occurredAt),
          milliseconds >= EventLimits.earliestMilliseconds, milliseconds < EventLimits.latestMilliseconds
    else { return nil }
    for key in ["listener_id", "position_ms"] {
        if let value = object[key] {
            guard let number = value as? NSNumber, let integer = exactInteger(number), integer >= 0 else { return nil }
        }
    }
    if let value = object["duration_ms"] {
        guard let number = value as? NSNumber, let integer = exactInteger(number), integer > 0 else { return nil }
    }
    for key in ["client", "country"] {
        if let value = object[key] {
            guard let text = value as? String, text.utf8.count <= 32 else { return nil }
        }
    }
    if let value = object["creator_id"] {
        guard let number = value as? NSNumber, let integer = exactInteger(number), integer >= 1,
              integer <= EventLimits.maxCreatorID else { return nil }
    }
    return CheckedEvent(eventID: eventID, type: type, trackID: trackID, occurredAtMilliseconds: milliseconds, object: object)
}

private func isAlphanumeric(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
}

/// The integer a JSON number stands for, or nil for fractions and out-of-range values.
private func exactInteger(_ number: NSNumber) -> Int64? {
    let double = number.doubleValue
    guard double == double.rounded(), abs(double) < 1e16 else { return nil }
    let integer = number.int64Value
    return Double(integer) == double ? integer : nil
}

/// Strict RFC 3339 UTC (`Z` or `+00:00`, optional fraction) to epoch milliseconds.
func parseRFC3339(_ text: String) -> Int64? {
    let pattern = #"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.(\d{1,9}))?(Z|\+00:00)$"#
    let regex = try! NSRegularExpression(pattern: pattern)
    let range = NSRange(text.startIndex..., in: text)
    guard let match = regex.firstMatch(in: text, range: range) else { return nil }
    func group(_ index: Int) -> String? {
        let groupRange = match.range(at: index)
        guard groupRange.location != NSNotFound, let swiftRange = Range(groupRange, in: text) else { return nil }
        return String(text[swiftRange])
    }
    let numbers = (1...6).map { Int64(group($0)!)! }
    let (year, month, day, hour, minute, second) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
    guard (1...12).contains(month), day >= 1, day <= UTCTime.daysInMonth(year: year, month: month),
          hour < 24, minute < 60, second < 60 else { return nil }
    let fraction = group(8).map { Int64(($0 + "000").prefix(3))! } ?? 0
    let days = UTCTime.daysFromCivil(year: year, month: month, day: day)
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + fraction
}

/// Everything found in a generated log tree, classified by the independent check.
struct LogCensus {
    var validUnique = 0
    var duplicates = 0
    var rejected: [[UInt8]] = []
    var lines = 0
    /// Plays per (track, hour), as `GeneratorSummary.truth`.
    var truth: [TruthKey: Int] = [:]
    /// Net counts of the other signals, as `GeneratorSummary.otherSignalsTruth` (the signal's
    /// name → cells).
    var otherSignalsTruth: [String: [TruthKey: Int]] = [:]
    var perType: [String: Int] = [:]
    var perHour: [Hour: Int] = [:]
    var perTrack: [Int64: Int] = [:]
    var firstLineOfID: [String: (file: String, line: Int, bytes: [UInt8])] = [:]
    /// Distance in lines between a duplicate and its original.
    var duplicateDistances: [Int] = []
    var eventsOutsideTheirFileHour = 0
    var eventsOutOfTimeOrder = 0
    var inventory: LogInventory

    init(root: String) throws {
        inventory = try LogDiscovery.inventory(of: [root])
        for file in inventory.files {
            var previousTime = Int64.min
            try LogReader(file: file).forEachChunk { chunk, firstLineNumber in
                var lineNumber = firstLineNumber
                var start = 0
                for index in 0..<chunk.count where chunk[index] == UInt8(ascii: "\n") {
                    record(Array(chunk[start..<index]), file: file, lineNumber: lineNumber, previousTime: &previousTime)
                    lineNumber += 1
                    start = index + 1
                }
                if start < chunk.count {
                    record(Array(chunk[start...]), file: file, lineNumber: lineNumber, previousTime: &previousTime)
                }
            }
        }
    }

    private mutating func record(_ line: [UInt8], file: LogFile, lineNumber: Int, previousTime: inout Int64) {
        lines += 1
        guard let event = checkEvent(line) else {
            rejected.append(line)
            return
        }
        if let first = firstLineOfID[event.eventID] {
            precondition(first.bytes == line && first.file == file.path, "a duplicate differs from its original")
            duplicates += 1
            duplicateDistances.append(lineNumber - first.line)
            return
        }
        firstLineOfID[event.eventID] = (file.path, lineNumber, line)
        validUnique += 1
        let hour = Hour(epochMilliseconds: event.occurredAtMilliseconds)
        if hour != file.hour { eventsOutsideTheirFileHour += 1 }
        if event.occurredAtMilliseconds < previousTime { eventsOutOfTimeOrder += 1 }
        previousTime = event.occurredAtMilliseconds
        let key = TruthKey(trackID: event.trackID, hour: hour)
        perType[event.type, default: 0] += 1
        switch event.type {
        case "play": truth[key, default: 0] += 1
        case "download": otherSignalsTruth["downloads", default: [:]][key, default: 0] += 1
        case "like": otherSignalsTruth["likes", default: [:]][key, default: 0] += 1
        case "unlike": otherSignalsTruth["likes", default: [:]][key, default: 0] -= 1
        case "repost": otherSignalsTruth["reposts", default: [:]][key, default: 0] += 1
        case "unrepost": otherSignalsTruth["reposts", default: [:]][key, default: 0] -= 1
        case "comment": otherSignalsTruth["comments", default: [:]][key, default: 0] += 1
        default: otherSignalsTruth["comments", default: [:]][key, default: 0] -= 1
        }
        perHour[hour, default: 0] += 1
        perTrack[event.trackID, default: 0] += 1
    }
}
