import BatchJob
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("BatchJob reads whatever the logs hold", .onTestThreads)
struct InputFormatTests {
    @Test("rejected lines are counted by reason with samples naming file:line; blank lines are not events", arguments: StoreKind.allCases)
    func rejectionsAreCountedWithSamples(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let ten = hour(10)
            let path = LogLayout.hourFilePath(root: workspace.logs, hour: ten)
            let lines = [
                play("ok1", track: 1, at: ten),                                                   // 1
                "{\"event_id\":\"x\",\"type\":\"play\"",                                            // 2 malformed_json
                "",                                                                                 // 3 blank
                #"{"event_id":"m","type":"play","occurred_at":"2026-11-20T10:00:00Z"}"#,          // 4 missing_field
                "   ",                                                                              // 5 blank
                #"{"event_id":"t","type":"skip","track_id":1,"occurred_at":"2026-11-20T10:00:00Z"}"#, // 6 unsupported_type
                #"{"event_id":"i","type":"play","track_id":0,"occurred_at":"2026-11-20T10:00:00Z"}"#, // 7 invalid_field
                play("ok2", track: 1, at: ten),                                                   // 8
                "{\"event_id\":\"big\",\"pad\":\"" + String(repeating: "p", count: 70_000) + "\"}", // 9 too_large
                "not json at all",                                                                  // 10 malformed_json
            ]
            try workspace.writeLines(lines, to: path)
            try workspace.close(ten)

            let summary = try workspace.run()

            #expect(summary.eventsRead == 8)
            #expect(summary.valid == 2)
            #expect(summary.rejections.total == 6)
            #expect(summary.eventsRead == summary.valid + summary.rejections.total)
            #expect(summary.rejections.counts == [
                .malformedJSON: 2, .missingField: 1, .unsupportedType: 1, .invalidField: 1, .tooLarge: 1,
            ])
            #expect(summary.rejections.samples.map(\.source) == [2, 4, 6, 7, 9, 10].map { "\(path):\($0)" })
            #expect(summary.rejections.samples.map(\.reason) == [
                .malformedJSON, .missingField, .unsupportedType, .invalidField, .tooLarge, .malformedJSON,
            ])
            #expect(summary.rejections.samples[0].payloadPrefix.hasPrefix("{\"event_id\":\"x\""))
            #expect(try workspace.plays(1, at: ten) == 2)
            let run = try #require(try workspace.runs().first)
            #expect(run.rejectedByReason == ["malformed_json": 2, "missing_field": 1, "unsupported_type": 1,
                                             "invalid_field": 1, "too_large": 1])
        }
    }

    @Test("a valid event of another signal counts, and a bad creator_id is invalid_field; plays with a creator count")
    func otherSignalsAndCreators() throws {
        try Workspace.with(.sqlite) { workspace in
            let ten = hour(10)
            let path = LogLayout.hourFilePath(root: workspace.logs, hour: ten)
            try workspace.writeLines([
                #"{"event_id":"p1","type":"play","track_id":1,"occurred_at":"2026-11-20T10:00:00Z","creator_id":7}"#,
                #"{"event_id":"l1","type":"like","track_id":1,"occurred_at":"2026-11-20T10:00:00Z","creator_id":7}"#,
                #"{"event_id":"p2","type":"play","track_id":1,"occurred_at":"2026-11-20T10:00:00Z","creator_id":"7"}"#,
                #"{"event_id":"p3","type":"play","track_id":1,"occurred_at":"2026-11-20T10:00:00Z"}"#,
            ], to: path)
            try workspace.close(ten)

            let summary = try workspace.run()

            #expect(summary.eventsRead == 4 && summary.valid == 3)
            #expect(summary.rejections.counts == [.invalidField: 1])
            #expect(summary.rejections.samples.map(\.source) == ["\(path):3"])
            #expect(summary.rejections.samples.last?.message == "creator_id must be an integer between 1 and 9007199254740991")
            #expect(try workspace.plays(1, at: ten) == 2)
        }
    }

    @Test("a line longer than the reader reads (a file's tail of NUL bytes after a crash) is one too_large rejection that says so, not a size it never learnt; the lines after it count",
          arguments: [false, true])
    func lineLongerThanTheReaderReads(unpartitioned: Bool) throws {
        try Workspace.with(.sqlite) { workspace in
            let ten = hour(10)
            let path = unpartitioned ? workspace.logs + "/backup.ndjson" : LogLayout.hourFilePath(root: workspace.logs, hour: ten)
            try workspace.writeLines([
                play("a", track: 1, at: ten),
                String(repeating: "\u{0}", count: 3 * LogReader.defaultMaxLineBytes),
                "{\"event_id\":\"big\",\"pad\":\"" + String(repeating: "p", count: 70_000) + "\"}",
                play("b", track: 1, at: ten),
            ], to: path)
            try workspace.close(ten)

            let summary = try workspace.run(from: ten, to: ten.advanced(by: 1))
            #expect(summary.rejections.counts == [.tooLarge: 2])
            #expect(summary.rejections.samples.map(\.message) == [
                "line is at least 1048576 bytes long (read no further), more than the limit of 65536",
                "event is 70027 bytes, more than the limit of 65536",
            ])
            #expect(try workspace.plays(1, at: ten) == 2)
        }
    }

    @Test("rejection samples are in the order of their lines, unpartitioned files first, however two workers share the chunks and hours")
    func samplesInLineOrder() throws {
        try Workspace.with(.sqlite) { workspace in
            let ten = hour(10), eleven = hour(11)
            // Nine 4 MiB chunks of an unpartitioned file, six with a rejected line: two workers
            // parse them side by side, each chunk by whichever is free.
            var lines: [String] = []
            for index in 0..<180_000 {
                lines.append(index % 30_000 == 7 ? "broken \(index)" : play("u\(index)", track: Int64(1 + index % 97), at: ten))
            }
            let backup = workspace.logs + "/backup.ndjson"
            try workspace.writeLines(lines, to: backup)
            try workspace.writeLines([play("a", track: 2, at: ten), "bad ten"], to: LogLayout.hourFilePath(root: workspace.logs, hour: ten))
            try workspace.writeLines(["bad eleven", play("b", track: 2, at: eleven)], to: LogLayout.hourFilePath(root: workspace.logs, hour: eleven))
            try workspace.close(ten, eleven)

            var seen: Set<[String]> = []
            for _ in 0..<3 {
                let summary = try workspace.run(from: ten, to: eleven.advanced(by: 1), all: true)
                #expect(summary.rejections.counts == [.malformedJSON: 8])
                seen.insert(summary.rejections.samples.map(\.source))
            }
            let sources = try #require(seen.first)
            #expect(seen.count == 1)
            #expect(Array(sources.prefix(6)) == stride(from: 8, to: 180_000, by: 30_000).map { "\(backup):\($0)" })
            #expect(Set(sources.dropFirst(6)) == [LogLayout.hourFilePath(root: workspace.logs, hour: ten) + ":2",
                                                  LogLayout.hourFilePath(root: workspace.logs, hour: eleven) + ":1"])
        }
    }

    @Test("CRLF line ends and a final line without a newline are read as events", arguments: StoreKind.allCases)
    func crlfAndUnterminatedFinalLine(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let ten = hour(10)
            let text = play("r1", track: 2, at: ten) + "\r\n" + play("r2", track: 2, at: ten) + "\r\n\r\n"
                + play("r3", track: 2, at: ten)
            try workspace.writeRaw(text, to: LogLayout.hourFilePath(root: workspace.logs, hour: ten))
            try workspace.writeRaw(play("r4", track: 2, at: ten) + "\n" + play("r1", track: 2, at: ten),
                                   to: LogLayout.hourFilePath(root: workspace.logs, hour: ten, late: true))
            try workspace.close(ten)

            let summary = try workspace.run()

            #expect(summary.eventsRead == 5)
            #expect(summary.rejections.total == 0)
            #expect(summary.duplicates == 1)
            #expect(try workspace.plays(2, at: ten) == 4)
        }
    }

    @Test("gzip files, multi-member and named without .gz, are read like plain ones; an empty file holds nothing", arguments: StoreKind.allCases)
    func gzipFiles(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let ten = hour(10)
            try workspace.writeHour(ten, [play("g1", track: 3, at: ten), play("g2", track: 3, at: ten), "junk"], gzip: true)
            // Compression is decided by the magic bytes, not the name.
            let disguised = LogLayout.hourFilePath(root: workspace.logs, hour: ten, segment: "disguised")
            try workspace.writeLines([play("g3", track: 3, at: ten), play("g1", track: 3, at: ten)], to: disguised, gzip: true)
            try workspace.writeRaw(play("g4", track: 3, at: ten),
                                   to: LogLayout.hourFilePath(root: workspace.logs, hour: ten, late: true))
            try workspace.writeRaw("", to: LogLayout.hourFilePath(root: workspace.logs, hour: ten, segment: "empty", gzip: true))
            try workspace.close(ten)

            let summary = try workspace.run()

            #expect(summary.eventsRead == 6)
            #expect(summary.rejections.counts == [.malformedJSON: 1])
            #expect(summary.rejections.samples.first?.source == LogLayout.hourFilePath(root: workspace.logs, hour: ten, gzip: true) + ":3")
            #expect(summary.duplicates == 1)
            #expect(try workspace.plays(3, at: ten) == 4)
        }
    }

    @Test("a file named explicitly is read whatever its name; its events land in their own hours", arguments: StoreKind.allCases)
    func explicitlyNamedFile(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let path = workspace.root + "/dump.txt"
            try workspace.writeLines([play("n1", track: 6, at: hour(2)), play("n2", track: 6, at: hour(3)),
                                      play("n3", track: 6, at: hour(30))], to: path)

            let summary = try workspace.run(paths: [path], from: hour(0), to: hour(24))

            #expect(summary.counted == 2)
            #expect(summary.outsideRange == 1)
            #expect(try workspace.counts(in: hours(0, 48)) == [
                Cell(track: 6, hour: hour(2)): 1, Cell(track: 6, hour: hour(3)): 1,
            ])
        }
    }
}
