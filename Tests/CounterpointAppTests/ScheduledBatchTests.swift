@testable import CounterpointApp
import CounterpointCore
import CounterStore
import Foundation
import LogCapture
import Runtime
import Scratch
import Testing

@Suite("Scheduled batch", .onTestThreads)
struct ScheduledBatchTests {
    @Test("covered hours whose files were deleted keep their counts, and the schedule warns once per change, not at every run")
    func filesGoneWarnedOnce() throws {
        try withTemporaryDirectory { scratch in
            let logs = scratch.appendingPathComponent("logs").path
            let day = "\(logs)/2026-11-20"
            try FileManager.default.createDirectory(atPath: day, withIntermediateDirectories: true)
            for hour in ["10", "11", "12"] {
                let play = #"{"event_id":"e\#(hour)","type":"play","track_id":7,"occurred_at":"2026-11-20T\#(hour):05:00Z"}"#
                try Data((play + "\n").utf8).write(to: URL(fileURLWithPath: "\(day)/\(hour).p0.ndjson"))
                try Data().write(to: URL(fileURLWithPath: "\(day)/\(hour).closed"))
            }
            let location = StoreLocation(directory: scratch.appendingPathComponent("data").path)
            let records = CapturingLogHandler.Records()
            let logger = CapturingLogHandler.logger("scheduled-batch-tests", into: records)
            let batch = ScheduledBatch(logDirectory: logs, store: .sqlite(location), scratchDirectory: location.directory,
                                       interval: .seconds(3_600), health: ComponentHealth(logger: logger).handle(for: "batch"),
                                       logger: logger)
            #expect(batch.runOnce())
            func plays() throws -> Int64 {
                try StoreBackend.sqlite(location).openReader().plays(track: 7, in: HourRange(Hour(index: 0), Hour(index: 1_000_000))).plays
            }
            #expect(try plays() == 3)

            try FileManager.default.removeItem(atPath: "\(day)/11.p0.ndjson")
            #expect(batch.runOnce() && batch.runOnce())
            #expect(try plays() == 3)
            let warnings = records.messages(at: .warning)
            #expect(warnings.count == 1, "\(warnings)")
            #expect(warnings.first?.contains("their counts are kept") == true)

            try FileManager.default.removeItem(atPath: "\(day)/12.p0.ndjson")
            #expect(batch.runOnce() && batch.runOnce())
            #expect(records.messages(at: .warning).count == 2)
            #expect(try plays() == 3)
        }
    }
}
