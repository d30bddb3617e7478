import Foundation
import Scratch
import Testing

extension EndToEnd {
    @Suite("the default batch covers only what changed")
    struct IncrementalBatch {
        static let start = "2026-10-21T00:00:00Z"
        static let firstHour = Hours.index(2026, 10, 21)
        static let hourCount: Int64 = 30 * 24

        @Test("30 days of closed hours: a rerun with nothing changed processes 0 hours; a late file re-covers only its hour, and the answers include its events")
        func lateFileReCoversOnlyItsHour() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                try await runCounterpointJSON([
                    "generate", "--logs", logs.path, "--events", "14400", "--tracks", "40", "--hours", "\(Self.hourCount)",
                    "--start", Self.start, "--seed", "23", "--duplicates", "0.02", "--json",
                ], scratch: scratch)

                let first = try await Steps.batch(logs: logs, data: data, scratch: scratch)
                #expect(int(first["hours_processed"]) == Int(Self.hourCount))
                #expect(int(first["hours_skipped"]) == 0)

                let unchanged = try await Steps.batch(logs: logs, data: data, scratch: scratch)
                #expect(int(unchanged["hours_processed"]) == 0)
                #expect(int(unchanged["hours_skipped"]) == Int(Self.hourCount))
                #expect(int(unchanged["events_read"]) == 0)

                // A late file in hour 13 of day 10: three new plays and a copy of an event the hour has.
                let lateHour = Self.firstHour + 9 * 24 + 13
                let dayDirectory = logs.appendingPathComponent(String(Hours.text(lateHour).prefix(10)))
                let hourFile = dayDirectory.appendingPathComponent("13.ndjson")
                let existing = try String(contentsOf: hourFile, encoding: .utf8)
                let copied = try #require(existing.split(separator: "\n").first { LogTruth.validEvent(Data($0.utf8)) != nil })
                let minute = String(Hours.text(lateHour).prefix(13)) + ":42:00Z"
                var late = (1...3).map { index in
                    #"{"event_id":"late-\#(index)","type":"play","track_id":\#(index),"occurred_at":"\#(minute)"}"#
                }
                late.append(String(copied))
                try (late.joined(separator: "\n") + "\n")
                    .write(to: dayDirectory.appendingPathComponent("13.late.p0.ndjson"), atomically: false, encoding: .utf8)

                let again = try await Steps.batch(logs: logs, data: data, scratch: scratch)
                #expect(int(again["hours_processed"]) == 1)
                #expect(int(again["hours_skipped"]) == Int(Self.hourCount) - 1)
                let ranges = again["ranges"] as? [[String: Any]] ?? []
                #expect(ranges.map { [$0["from"] as? String, $0["to"] as? String] }
                    == [[Hours.text(lateHour), Hours.text(lateHour + 1)]])

                let truth = try LogTruth(logs: logs)
                let hourRange = lateHour..<(lateHour + 1)
                #expect(int(again["counted"]) == truth.counted(hours: hourRange))
                #expect(int(again["duplicates"]) >= 1)

                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    for track: Int64 in 1...3 {
                        let points = try Steps.hourlyTimeline(server, track: track, hours: (lateHour - 1)..<(lateHour + 2))
                        for hour in (lateHour - 1)..<(lateHour + 2) {
                            #expect(points[hour] == truth.plays(of: track, hours: hour..<(hour + 1)),
                                    "track \(track) at \(Hours.text(hour))")
                        }
                    }
                    let totals = try Steps.totals(server, tracks: Array(1...45))
                    for track: Int64 in 1...45 {
                        #expect(totals[track] == truth.plays(of: track), "total of track \(track)")
                    }
                    #expect(try Steps.batchRunCount(server) == 2)
                }
            }
        }

        @Test("log retention deleting a day's files (their closed markers left) changes no count: the default batch keeps those hours and says so")
        func deletedLogsKeepTheirCounts() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                try await runCounterpointJSON([
                    "generate", "--logs", logs.path, "--events", "3000", "--tracks", "20", "--hours", "72",
                    "--start", Self.start, "--seed", "5", "--json",
                ], scratch: scratch)
                let truth = try LogTruth(logs: logs)
                _ = try await Steps.batch(logs: logs, data: data, scratch: scratch)

                // What `find logs -name '*.ndjson' -mtime +N -delete` does to the first day.
                let firstDay = logs.appendingPathComponent(String(Self.start.prefix(10)))
                for name in try FileManager.default.contentsOfDirectory(atPath: firstDay.path) where name.hasSuffix(".ndjson") {
                    try FileManager.default.removeItem(at: firstDay.appendingPathComponent(name))
                }
                let after = try await Steps.batch(logs: logs, data: data, scratch: scratch)
                #expect(int(after["hours_processed"]) == 0)
                let gone = after["hours_with_files_gone"] as? [[String: Any]] ?? []
                #expect(gone.map { [$0["from"] as? String, $0["to"] as? String] }
                    == [[Hours.text(Self.firstHour), Hours.text(Self.firstHour + 24)]])

                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    let totals = try Steps.totals(server, tracks: Array(1...20))
                    for track: Int64 in 1...20 {
                        #expect(totals[track] == truth.plays(of: track), "total of track \(track)")
                    }
                }
            }
        }
    }
}
