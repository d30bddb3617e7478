import BatchJob
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("BatchJob de-duplicates by (hour, event_id)", .onTestThreads)
struct DeduplicationTests {
    @Test("copies within a file and across the hour's segment and late files are counted once", arguments: StoreKind.allCases)
    func duplicatesAcrossAnHoursFilesCountOnce(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let ten = hour(10)
            try workspace.writeHour(ten, [play("A", track: 1, at: ten), play("A", track: 1, at: ten),
                                          play("B", track: 2, at: ten)])
            try workspace.writeHour(ten, [play("A", track: 1, at: ten), play("C", track: 1, at: ten)], segment: "s1")
            try workspace.writeHour(ten, [play("B", track: 2, at: ten), play("D", track: 2, at: ten)], late: true)
            try workspace.writeHour(ten, [play("C", track: 1, at: ten), play("E", track: 3, at: ten)],
                                    segment: "s2", late: true, gzip: true)
            try workspace.close(ten)

            let summary = try workspace.run()

            #expect(summary.files == 4)
            #expect(summary.eventsRead == 9)
            #expect(summary.valid == 9)
            #expect(summary.duplicates == 4)
            #expect(summary.counted == 5)
            #expect(try workspace.counts(in: hours(10, 11)) == [
                Cell(track: 1, hour: ten): 2, Cell(track: 2, hour: ten): 2, Cell(track: 3, hour: ten): 1,
            ])
        }
    }

    @Test("the same event_id in two different hours is two plays (the documented per-hour key)", arguments: StoreKind.allCases)
    func sameIDInTwoHoursCountsTwice(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try workspace.writeHour(hour(10), [play("same", track: 4, at: hour(10))])
            try workspace.writeHour(hour(11), [play("same", track: 4, at: hour(11))])
            try workspace.close(hour(10), hour(11))

            let summary = try workspace.run()

            #expect(summary.duplicates == 0)
            #expect(summary.counted == 2)
            #expect(try workspace.plays(4, hours(10, 12)).plays == 2)
        }
    }

    @Test("an event filed under another hour's file is counted in its own hour", arguments: StoreKind.allCases)
    func misfiledEventCountsInItsOwnHour(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try workspace.writeHour(hour(10), [play("x", track: 8, at: hour(10)), play("y", track: 8, at: hour(11))])
            try workspace.writeHour(hour(11), [play("z", track: 8, at: hour(11))])
            try workspace.close(hour(10), hour(11))

            let summary = try workspace.run()

            #expect(summary.counted == 3)
            #expect(try workspace.plays(8, at: hour(10)) == 1)
            #expect(try workspace.plays(8, at: hour(11)) == 2)
        }
    }

    @Test("unpartitioned files are read once and de-duplicated exactly with the hour files, in memory or spilled to disk; spill files are removed",
          arguments: StoreKind.allCases, [nil, 1] as [Int?])
    func unpartitionedFilesAreSplitAndDeduplicated(_ store: StoreKind, spillBudget: Int?) throws {
        try Workspace.with(store) { workspace in
            var truth = Truth()
            /// A play line; the hours being rebuilt (10 and 11) also go into the truth.
            func event(_ id: String, _ track: Int64, _ offset: Int64, minute: Int64 = 7) -> String {
                if (10..<12).contains(offset) { truth.add(id, track: track, at: hour(offset)) }
                return play(id, track: track, at: hour(offset), minute: minute)
            }
            // Hours 10 and 11 are rebuilt; the hour-9 and hour-12 events are outside the range.
            let first = [
                event("u1", 1, 10), event("u2", 1, 10), event("u3", 2, 11), event("u1", 1, 10),
                event("early", 1, 9), "not json", event("u4", 3, 11, minute: 59), event("late", 2, 12), "",
            ]
            let second = [
                event("u3", 2, 11), event("u5", 2, 10), event("u2", 1, 10), event("u6", 3, 11), event("u5", 2, 10),
            ]
            let partitioned = [event("u4", 3, 11, minute: 59), event("p1", 1, 11), event("u6", 3, 11)]
            try workspace.writeLines(first, to: workspace.logs + "/events.ndjson")
            try workspace.writeLines(second, to: workspace.logs + "/more/extra.jsonl", gzip: true)
            try workspace.writeHour(hour(11), partitioned)

            let summary = try workspace.run(from: hour(10), to: hour(12), workers: 2, spillBudget: spillBudget)

            #expect(summary.eventsRead == 16)
            #expect(summary.valid == 15)
            #expect(summary.rejections.total == 1)
            #expect(summary.outsideRange == 2)
            #expect(summary.duplicates == truth.duplicates)
            #expect(summary.duplicates == 6)
            #expect(Int64(summary.counted) == truth.counted)
            #expect(try workspace.counts(in: hours(9, 13)) == truth.cells)
            let sample = try #require(summary.rejections.samples.first)
            #expect(sample.source == workspace.logs + "/events.ndjson:6")
            #expect(try workspace.stagingLeftovers().isEmpty)
            #expect(try workspace.coverage() == Coverage([hours(10, 12)]))
        }
    }

    @Test("a whole generated data set repeated as one unpartitioned file adds only duplicates", arguments: StoreKind.allCases)
    func generatedLogsRepeatedUnpartitioned(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let generated = try generateLogs(into: workspace.logs + "/hours", events: 6_000, hours: 4, duplicateRate: 0.02)
            // Concatenate every hour file into one file of unknown hour, in another directory.
            let copy = workspace.logs + "/copy/all-events.ndjson"
            var bytes: [UInt8] = []
            for offset in 0..<4 {
                let path = LogLayout.hourFilePath(root: workspace.logs + "/hours", hour: generated.start.advanced(by: Int64(offset)))
                bytes += try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            }
            try workspace.writeRaw(bytes, to: copy)

            let summary = try workspace.run(paths: [workspace.logs + "/hours", copy])

            #expect(summary.counted == generated.events)
            #expect(summary.duplicates == 2 * generated.duplicates + generated.events)
            #expect(summary.outsideRange == 0)
            #expect(try workspace.counts(in: HourRange(generated.start, generated.start.advanced(by: 4))) == generated.truthCells)
            #expect(try workspace.stagingLeftovers().isEmpty)
        }
    }
}

@Suite("Dimension counts from unpartitioned files", .onTestThreads)
struct UnpartitionedDimensionTests {
    @Test("the same logs read as hour files and as one unpartitioned file, in memory or spilled, give the same waveform and breakdown counts",
          arguments: StoreKind.allCases, [nil, 1] as [Int?])
    func unpartitionedKeepsDimensions(_ store: StoreKind, spillBudget: Int?) throws {
        try Workspace.with(store) { hourFiles in
            try Workspace.with(store) { oneFile in
                let generated = try generateLogs(into: hourFiles.logs, events: 4_000, hours: 4, duplicateRate: 0.02)
                var bytes: [UInt8] = []
                for offset in 0..<4 {
                    let path = LogLayout.hourFilePath(root: hourFiles.logs, hour: generated.start.advanced(by: Int64(offset)))
                    bytes += try Array(Data(contentsOf: URL(fileURLWithPath: path)))
                }
                try oneFile.writeRaw(bytes, to: oneFile.logs + "/all-events.ndjson")
                let range = HourRange(generated.start, generated.start.advanced(by: 4))
                _ = try hourFiles.run(from: range.lower, to: range.upper)
                _ = try oneFile.run(from: range.lower, to: range.upper, spillBudget: spillBudget)

                let expected = try hourFiles.store.openReader()
                let actual = try oneFile.store.openReader()
                let tracks = Set(generated.truthCells.keys.map(\.track)).sorted().prefix(40)
                #expect(!tracks.isEmpty)
                for track in tracks {
                    let want = try expected.dimensions(track: track, in: range)
                    #expect(want.totals.waveform.reduce(0, +) > 0 || want.plays.plays < 5, "track \(track) has no positions at all")
                    #expect(try actual.dimensions(track: track, in: range) == want, "track \(track)")
                }
            }
        }
    }
}
