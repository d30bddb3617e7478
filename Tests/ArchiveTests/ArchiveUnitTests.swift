@testable import Archive
import CounterpointCore
import EventLogs
import Foundation
import Patience
import Testing

@Suite("Stream time", .onTestThreads)
struct StreamClockTests {
    @Test("the stream time is the newest event, held back by partitions with a backlog but not by caught-up ones")
    func backlogHoldsBack() {
        var clock = StreamClock()
        clock.assign([0, 1, 2])
        #expect(clock.streamTime(caughtUp: { _ in false }, now: .max) == nil)
        clock.observe(partition: 0, occurredAtMilliseconds: 5_000)
        clock.observe(partition: 1, occurredAtMilliseconds: 9_000)
        clock.observe(partition: 1, occurredAtMilliseconds: 7_000)
        // Partition 2 has a backlog and has delivered nothing: nothing may close yet.
        #expect(clock.streamTime(caughtUp: { $0 != 2 }, now: .max) == nil)
        // Partition 2 is empty and caught up; partition 0 still has a backlog at 5 s.
        #expect(clock.streamTime(caughtUp: { $0 == 2 }, now: .max) == 5_000)
        // Everyone caught up: the newest event.
        #expect(clock.streamTime(caughtUp: { _ in true }, now: .max) == 9_000)
        clock.revoke([0])
        #expect(clock.streamTime(caughtUp: { $0 == 2 }, now: .max) == 9_000)
        #expect(clock.assignedPartitions == [1, 2])
    }

    @Test("an event dated ahead of the wall clock carries the stream time only as far as the clock")
    func neverAheadOfTheClock() {
        var clock = StreamClock()
        clock.assign([0, 1])
        clock.observe(partition: 0, occurredAtMilliseconds: 5_000)
        clock.observe(partition: 1, occurredAtMilliseconds: 4_000_000_000_000)
        #expect(clock.newestEvent == 4_000_000_000_000)
        #expect(clock.streamTime(caughtUp: { _ in true }, now: 60_000) == 60_000)
        // A partition with a backlog still holds it back below the clock.
        #expect(clock.streamTime(caughtUp: { $0 == 1 }, now: 60_000) == 5_000)
        #expect(clock.streamTime(caughtUp: { _ in true }, now: 1_000) == 1_000)
    }
}

@Suite("Archived lines", .onTestThreads)
struct ArchivedLineTests {
    private func sanitized(_ text: String) -> [UInt8] {
        Array(text.utf8).withUnsafeBytes { value in ArchivedLine.withLine(of: value) { Array($0) } }
    }

    @Test("line breaks become tabs, which leaves a valid event the same event")
    func validStaysValid() throws {
        let text = "{\n\"event_id\":\"x1\",\r\n\"type\":\"play\",\"track_id\":7,\n\"occurred_at\":1790000000000}\n"
        let line = sanitized(text)
        #expect(!line.contains(UInt8(ascii: "\n")) && !line.contains(UInt8(ascii: "\r")))
        let original = try EventParser.parse(Array(text.utf8)).get()
        #expect(try EventParser.parse(line).get() == original)
    }

    @Test("line breaks become tabs, which leaves an invalid event invalid for the same reason")
    func invalidStaysInvalid() {
        let cases = [
            "{\"event_id\":\"a\nb\",\"type\":\"play\",\"track_id\":7,\"occurred_at\":1790000000000}",
            "{\"event_id\":\"ok\",\n\"type\":\"click\",\"track_id\":7,\"occurred_at\":1790000000000}",
            "{\"event_id\":\"ok\",\n\"track_id\":7}",
            "\n\r\n",
            "not\njson",
        ]
        for text in cases {
            let before = EventParser.parse(Array(text.utf8))
            let after = EventParser.parse(sanitized(text))
            guard case .failure(let original) = before, case .failure(let kept) = after else {
                Issue.record("expected both to be rejected: \(text.debugDescription)")
                continue
            }
            #expect(original.reason == kept.reason, "\(text.debugDescription)")
        }
    }

    @Test("a value without line breaks is written as it is, without a copy")
    func untouched() {
        let bytes = Array(#"{"event_id":"z"}"#.utf8)
        bytes.withUnsafeBytes { value in
            ArchivedLine.withLine(of: value) { line in
                #expect(line.baseAddress == value.baseAddress && line.count == value.count)
            }
        }
    }

    @Test("a message that is not an event is filed in the hour of its Kafka timestamp, or of now without a usable one")
    func fallbackHour() {
        let now = time(15, minute: 1)
        #expect(ArchivedLine.fallbackHour(kafkaTimestampMilliseconds: time(10, minute: 59), nowMilliseconds: now) == hour(10))
        #expect(ArchivedLine.fallbackHour(kafkaTimestampMilliseconds: nil, nowMilliseconds: now) == hour(15))
        #expect(ArchivedLine.fallbackHour(kafkaTimestampMilliseconds: 12, nowMilliseconds: now) == hour(15))
    }
}

@Suite("Archive files", .onTestThreads)
struct ArchiveFilesTests {
    private func withRoot(_ body: (String) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("archive-files-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try body(root)
    }

    @Test("a line torn by a crash is ended before the next event is appended, so it stays one malformed line")
    func tornLine() throws {
        try withRoot { root in
            let path = LogLayout.hourFilePath(root: root, hour: hour(10), segment: "p0")
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let whole = Play(eventID: "whole", track: 1, occurredAt: time(10, minute: 1)).json
            let torn = String(Play(eventID: "torn", track: 1, occurredAt: time(10, minute: 2)).json.prefix(30))
            try Data((whole + "\n" + torn).utf8).write(to: URL(fileURLWithPath: path))

            let files = ArchiveFiles(root: root, bufferSize: 4096)
            try files.adoptUnclosedHours()
            #expect(files.openHours == [hour(10)])
            let next = Play(eventID: "next", track: 1, occurredAt: time(10, minute: 3)).json
            try Array(next.utf8).withUnsafeBytes { _ = try files.write($0, hour: hour(10), partition: 0) }
            try files.closeHour(hour(10))

            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(lines == [whole, torn, next])
            #expect(FileManager.default.fileExists(atPath: LogLayout.closedMarkerPath(root: root, hour: hour(10))))
        }
    }

    @Test("events of an hour whose closed marker is on disk go to that hour's late file")
    func markerMakesLate() throws {
        try withRoot { root in
            try LogLayout.markClosed(root: root, hour: hour(10), durable: false)
            let files = ArchiveFiles(root: root, bufferSize: 4096)
            let line = Array(Play(eventID: "late", track: 1, occurredAt: time(10, minute: 3)).json.utf8)
            let wentLate = try line.withUnsafeBytes { try files.write($0, hour: hour(10), partition: 3) }
            let onTime = try line.withUnsafeBytes { try files.write($0, hour: hour(11), partition: 3) }
            try files.closeAll()
            #expect(wentLate && !onTime)
            #expect(FileManager.default.fileExists(atPath: LogLayout.hourFilePath(root: root, hour: hour(10), segment: "p3", late: true)))
            #expect(files.openHours == [hour(11)])
        }
    }
}
