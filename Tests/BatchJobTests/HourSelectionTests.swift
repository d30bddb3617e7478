import BatchJob
import CounterpointCore
import CounterStore
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("BatchJob chooses the hours it rebuilds", .onTestThreads)
struct HourSelectionTests {
    @Test("by default only closed hours are rebuilt; an hour file without a .closed marker is left alone", arguments: StoreKind.allCases)
    func onlyClosedHoursByDefault(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try workspace.writeHour(hour(10), [play("a", track: 1, at: hour(10)), play("b", track: 1, at: hour(10))])
            try workspace.writeHour(hour(11), [play("c", track: 1, at: hour(11))])
            try workspace.writeHour(hour(13), [play("d", track: 2, at: hour(13))])
            try workspace.close(hour(10), hour(13))

            let summary = try workspace.run()

            #expect(summary.ranges == [hours(10, 11), hours(13, 14)])
            #expect(summary.hours == 2)
            #expect(summary.eventsRead == 3)
            #expect(summary.counted == 3)
            #expect(try workspace.coverage() == Coverage([hours(10, 11), hours(13, 14)]))
            #expect(try workspace.plays(1, at: hour(10)) == 2)
            #expect(try workspace.plays(2, at: hour(13)) == 1)
            // Hour 11 is not covered: the (empty) realtime layer answers for it.
            let eleven = try workspace.plays(1, hours(11, 12))
            #expect(eleven.batchPlays == 0 && eleven.realtimePlays == 0)
        }
    }

    @Test("logs without closed hours and no from/to throw noClosedHours and write nothing", arguments: StoreKind.allCases)
    func noClosedHoursWritesNothing(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try workspace.writeHour(hour(10), [play("a", track: 1, at: hour(10))])

            #expect {
                try workspace.run()
            } throws: { error in
                guard case .noClosedHours? = error as? BatchError else { return false }
                return true
            }
            #expect(try !workspace.batchLayerWritten())
            #expect(try workspace.stagingLeftovers().isEmpty)
        }
    }

    @Test("from/to override the closed markers: open hours are rebuilt, closed hours outside are not", arguments: StoreKind.allCases)
    func fromAndToOverrideClosedMarkers(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try workspace.writeHour(hour(10), [play("a", track: 1, at: hour(10))])
            try workspace.writeHour(hour(11), [play("b", track: 1, at: hour(11)), play("c", track: 2, at: hour(11))])
            try workspace.close(hour(10))

            let summary = try workspace.run(from: hour(11), to: hour(13))

            #expect(summary.ranges == [hours(11, 13)])
            #expect(summary.hours == 2)
            // The hour-10 file is outside the range and is not even read.
            #expect(summary.eventsRead == 2)
            #expect(try workspace.coverage() == Coverage([hours(11, 13)]))
            #expect(try workspace.plays(1, at: hour(11)) == 1)
            #expect(try workspace.plays(2, at: hour(11)) == 1)
            #expect(try workspace.plays(1, hours(10, 11)).batchPlays == 0)
        }
    }

    @Test("from alone runs up to the last closed hour; to alone starts at the first closed hour", arguments: StoreKind.allCases)
    func oneSidedRanges(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            for offset: Int64 in 8...12 {
                try workspace.writeHour(hour(offset), [play("e\(offset)", track: 5, at: hour(offset))])
            }
            try workspace.close(hour(9), hour(11))

            #expect(try workspace.run(from: hour(10)).ranges == [hours(10, 12)])
            #expect(try workspace.run(to: hour(13)).ranges == [hours(9, 13)])
            #expect(try workspace.coverage() == Coverage([hours(9, 13)]))
            #expect(try workspace.plays(5, hours(0, 24)).batchPlays == 4)
        }
    }

    @Test("from after to is an emptyRange error and writes nothing", arguments: StoreKind.allCases)
    func invertedRangeThrows(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try workspace.writeHour(hour(10), [play("a", track: 1, at: hour(10))])
            #expect {
                try workspace.run(from: hour(12), to: hour(10))
            } throws: { error in
                guard case .emptyRange? = error as? BatchError else { return false }
                return true
            }
            #expect(try !workspace.batchLayerWritten())
        }
    }

    @Test("every hour of the range is covered, also hours without files: they answer 0 even where realtime has plays", arguments: StoreKind.allCases)
    func emptyHoursAreCoveredAndAnswerZero(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let realtime = try workspace.store.openRealtimeWriter()
            let increments = (9...12).map { CountRow(id: 7, hour: hour(Int64($0)), plays: 5) }
            _ = try realtime.apply(increments: increments, progress: [], flushedAt: 1_700_000_000_000)
            try workspace.writeHour(hour(10), [play("a", track: 7, at: hour(10)), play("b", track: 7, at: hour(10))])

            let summary = try workspace.run(from: hour(10), to: hour(12))

            #expect(summary.hours == 2)
            #expect(summary.rows == 1)
            #expect(try workspace.coverage() == Coverage([hours(10, 12)]))
            #expect(try workspace.plays(7, at: hour(10)) == 2)
            #expect(try workspace.plays(7, at: hour(11)) == 0)
            let merged = try workspace.plays(7, hours(9, 13))
            #expect(merged.batchPlays == 2)
            #expect(merged.realtimePlays == 10)  // hours 9 and 12 are not covered
            #expect(merged.plays == 12)
        }
    }

    @Test("the run is recorded with its range and statistics", arguments: StoreKind.allCases)
    func runIsRecorded(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try workspace.writeHour(hour(3), [play("a", track: 1, at: hour(3)), "{oops", play("a", track: 1, at: hour(3))])
            try workspace.close(hour(3))

            let summary = try workspace.run()
            let run = try #require(try workspace.runs().first)

            #expect(run.range == hours(3, 4))
            #expect(run.eventsRead == summary.eventsRead && run.eventsRead == 3)
            #expect(run.valid == 2)
            #expect(run.duplicates == 1)
            #expect(run.rejected == 1)
            #expect(run.rejectedByReason == ["malformed_json": 1])
            #expect(run.tracks == 1 && run.rows == 1)
            #expect(run.finishedAt >= run.startedAt)
        }
    }
}
