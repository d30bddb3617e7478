import BatchJob
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("BatchJob default run covers only what changed", .onTestThreads)
struct IncrementalTests {
    /// Hours 10, 11 and 12, closed, two plays each (tracks 1 and 2).
    private func writeThreeHours(_ workspace: Workspace) throws {
        for offset: Int64 in 10...12 {
            try workspace.writeHour(hour(offset), [play("a\(offset)", track: 1, at: hour(offset)),
                                                   play("b\(offset)", track: 2, at: hour(offset))])
            try workspace.close(hour(offset))
        }
    }

    @Test("a second default run with nothing changed processes 0 hours, skips every closed hour and writes nothing", arguments: StoreKind.allCases)
    func nothingChangedDoesNoWork(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            let first = try workspace.run()
            #expect(first.hours == 3)
            #expect(first.hoursSkipped == 0)
            let rows = try workspace.counts(in: hours(0, 24))

            let second = try workspace.run()
            #expect(second.hours == 0)
            #expect(second.hoursSkipped == 3)
            #expect(second.eventsRead == 0)
            #expect(second.files == 0)
            #expect(second.ranges.isEmpty)
            #expect(try workspace.runs().count == 1)
            #expect(try workspace.counts(in: hours(0, 24)) == rows)
            #expect(try workspace.coverage() == Coverage([hours(10, 13)]))
        }
    }

    @Test("a late file in a covered hour re-covers only that hour, and its counts include the late events", arguments: StoreKind.allCases)
    func lateFileReCoversItsHour(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            _ = try workspace.run()
            // One new play, and a copy of an event the hour already had.
            try workspace.writeHour(hour(11), [play("late1", track: 1, at: hour(11)), play("a11", track: 1, at: hour(11))],
                                    segment: "p0", late: true)

            let summary = try workspace.run()
            #expect(summary.hours == 1)
            #expect(summary.hoursSkipped == 2)
            #expect(summary.ranges == [hours(11, 12)])
            #expect(summary.duplicates == 1)
            #expect(try workspace.plays(1, at: hour(11)) == 2)
            #expect(try workspace.plays(1, at: hour(10)) == 1)
            #expect(try workspace.runs().count == 2)
            #expect(try workspace.run().hours == 0)
        }
    }

    @Test("a file that grows, or is replaced by one of the same size, makes only its hour dirty", arguments: StoreKind.allCases)
    func grownOrReplacedFileMakesItsHourDirty(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            _ = try workspace.run()

            let file12 = LogLayout.hourFilePath(root: workspace.logs, hour: hour(12))
            let appender = try LogWriter(path: file12, gzip: false, append: true)
            try appender.write(line: Array(play("c12", track: 3, at: hour(12)).utf8))
            try appender.close()
            let grown = try workspace.run()
            #expect(grown.ranges == [hours(12, 13)])
            #expect(try workspace.plays(3, at: hour(12)) == 1)

            // Same size, same name, other content: written beside and renamed over (a new inode).
            let file10 = LogLayout.hourFilePath(root: workspace.logs, hour: hour(10))
            try workspace.writeLines([play("x10", track: 7, at: hour(10)), play("y10", track: 7, at: hour(10))],
                                     to: file10 + ".new")
            #expect(try FileManager.default.attributesOfItem(atPath: file10 + ".new")[.size] as? Int
                    == FileManager.default.attributesOfItem(atPath: file10)[.size] as? Int)
            #expect(rename(file10 + ".new", file10) == 0)
            let replaced = try workspace.run()
            #expect(replaced.ranges == [hours(10, 11)])
            #expect(try workspace.plays(7, at: hour(10)) == 2)
            #expect(try workspace.plays(1, at: hour(10)) == 0)
        }
    }

    @Test("a newly closed hour is processed alone", arguments: StoreKind.allCases)
    func newlyClosed(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            try workspace.writeHour(hour(13), [play("a13", track: 1, at: hour(13))])
            _ = try workspace.run()
            #expect(try workspace.plays(1, at: hour(13)) == 0)

            try workspace.close(hour(13))
            let closed = try workspace.run()
            #expect(closed.ranges == [hours(13, 14)])
            #expect(try workspace.plays(1, at: hour(13)) == 1)
        }
    }

    @Test("a covered hour whose files were deleted (log retention) keeps its counts and is reported; --from/--to rebuilds it from what remains", arguments: StoreKind.allCases)
    func deletedFilesKeepTheirCounts(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            // Hour 13 in two partitions' files.
            try workspace.writeHour(hour(13), [play("a13", track: 1, at: hour(13))], segment: "p0")
            try workspace.writeHour(hour(13), [play("b13", track: 1, at: hour(13))], segment: "p1")
            try workspace.close(hour(13))
            _ = try workspace.run()

            // Every file of hour 11 goes (its closed marker stays), and one of hour 13's two.
            try FileManager.default.removeItem(atPath: LogLayout.hourFilePath(root: workspace.logs, hour: hour(11)))
            try FileManager.default.removeItem(atPath: LogLayout.hourFilePath(root: workspace.logs, hour: hour(13), segment: "p1"))
            let kept = try workspace.run()
            #expect(kept.hours == 0)
            #expect(kept.hoursSkipped == 2)
            #expect(kept.hoursWithFilesGone == [hours(11, 12), hours(13, 14)])
            #expect(try workspace.plays(1, at: hour(11)) == 1)
            #expect(try workspace.plays(1, at: hour(13)) == 2)
            #expect(try workspace.runs().count == 1)

            // Asked for by name, hour 11 is rebuilt from what is left (nothing), and is then
            // an hour like any other.
            let rebuilt = try workspace.run(from: hour(11), to: hour(12))
            #expect(rebuilt.ranges == [hours(11, 12)])
            #expect(try workspace.plays(1, at: hour(11)) == 0)
            let after = try workspace.run()
            #expect(after.hoursWithFilesGone == [hours(13, 14)])
            #expect(after.hours == 0)
        }
    }

    @Test("a covered hour whose file was replaced by its gzip is rebuilt as changed, not kept as gone", arguments: StoreKind.allCases)
    func gzipReplacementIsAChange(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let lines = [play("a", track: 1, at: hour(10)), play("b", track: 1, at: hour(10))]
            let plain = try workspace.writeHour(hour(10), lines, segment: "p0")
            try workspace.close(hour(10))
            _ = try workspace.run()
            try workspace.writeLines(lines + [play("c", track: 1, at: hour(10))], to: plain + ".gz", gzip: true)
            try FileManager.default.removeItem(atPath: plain)

            let summary = try workspace.run()
            #expect(summary.ranges == [hours(10, 11)])
            #expect(summary.hoursWithFilesGone.isEmpty)
            #expect(try workspace.plays(1, at: hour(10)) == 3)
        }
    }

    @Test("--all rebuilds every closed hour even when nothing changed", arguments: StoreKind.allCases)
    func allRebuildsEverything(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            _ = try workspace.run()
            let summary = try workspace.run(all: true)
            #expect(summary.hours == 3)
            #expect(summary.hoursSkipped == 0)
            #expect(summary.counted == 6)
        }
    }

    @Test("a from/to run records its hours' sources: a default run afterwards skips them", arguments: StoreKind.allCases)
    func rangeRunRecordsSources(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            _ = try workspace.run(from: hour(10), to: hour(12))
            let sources = try workspace.hourSources()
            #expect(Set(sources.keys) == [hour(10), hour(11)])
            #expect(sources[hour(10)]?.files == 1)

            let summary = try workspace.run()
            #expect(summary.ranges == [hours(12, 13)])
            #expect(summary.hoursSkipped == 2)
        }
    }

    @Test("a changed unpartitioned file makes every closed hour dirty, since any hour may hold its events", arguments: StoreKind.allCases)
    func changedUnpartitionedFileDirtiesEveryHour(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            try writeThreeHours(workspace)
            let extra = workspace.root + "/extra.ndjson"
            try workspace.writeLines([play("u1", track: 5, at: hour(11))], to: extra)
            _ = try workspace.run(paths: [workspace.logs, extra])
            #expect(try workspace.run(paths: [workspace.logs, extra]).hours == 0)

            try workspace.writeLines([play("u1", track: 5, at: hour(11)), play("u2", track: 5, at: hour(12))], to: extra)
            let summary = try workspace.run(paths: [workspace.logs, extra])
            #expect(summary.hours == 3)
            #expect(try workspace.plays(5, at: hour(12)) == 1)
            #expect(try workspace.plays(5, at: hour(11)) == 1)
        }
    }

    @Test("an hour file left beside its complete .gz twin (a crash while compressing) is read once: no duplicates", arguments: StoreKind.allCases)
    func plainAndGzipTwinCountedOnce(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            let lines = [play("a", track: 1, at: hour(10)), play("b", track: 1, at: hour(10))]
            let plain = try workspace.writeHour(hour(10), lines, segment: "p0")
            try workspace.writeLines(lines, to: plain + ".gz", gzip: true)
            try workspace.close(hour(10))

            let summary = try workspace.run()
            #expect(summary.files == 1)
            #expect(summary.duplicates == 0)
            #expect(try workspace.plays(1, at: hour(10)) == 2)
            // The archiver deleting the plain twin later does not make the hour look changed.
            try FileManager.default.removeItem(atPath: plain)
            #expect(try workspace.run().hours == 0)
        }
    }

    @Test("changes in closed days of a longer history are found: a late file, a file rewritten in place, gzip decided by content", arguments: StoreKind.allCases)
    func changesInOldClosedDaysAreFound(_ store: StoreKind) throws {
        try Workspace.with(store) { workspace in
            // Three closed days, one hour a day, the default run recording them all.
            for offset: Int64 in [10, 34, 58] {
                try workspace.writeHour(hour(offset), [play("a\(offset)", track: 1, at: hour(offset)),
                                                       play("b\(offset)", track: 2, at: hour(offset))])
                try workspace.close(hour(offset))
            }
            #expect(try workspace.run().hours == 3)
            #expect(try workspace.run().hours == 0)

            // A late file dropped into the first day's directory.
            try workspace.writeHour(hour(10), [play("late10", track: 3, at: hour(10))], segment: "p0", late: true)
            let late = try workspace.run()
            #expect(late.ranges == [hours(10, 11)])
            #expect(try workspace.plays(3, at: hour(10)) == 1)

            // A file of the second day rewritten in place (the same inode, the same size, its
            // directory untouched), as `cp` over it or an editor saving in place does.
            let file34 = LogLayout.hourFilePath(root: workspace.logs, hour: hour(34))
            let inode = try FileManager.default.attributesOfItem(atPath: file34)[.systemFileNumber] as? UInt64
            let rewritten = Array((play("x34", track: 7, at: hour(34)) + "\n" + play("y34", track: 7, at: hour(34)) + "\n").utf8)
            #expect(rewritten.count == (try FileManager.default.attributesOfItem(atPath: file34)[.size] as? Int))
            let handle = try #require(FileHandle(forWritingAtPath: file34))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(rewritten))
            try handle.close()
            #expect(try FileManager.default.attributesOfItem(atPath: file34)[.systemFileNumber] as? UInt64 == inode)
            let inPlace = try workspace.run()
            #expect(inPlace.ranges == [hours(34, 35)])
            #expect(try workspace.plays(7, at: hour(34)) == 2)
            #expect(try workspace.plays(1, at: hour(34)) == 0)

            // Files of an unchanged hour are not opened to tell it is unchanged, so whether a
            // file is gzip is decided when its hour is read: by its bytes, not its name.
            try workspace.writeLines([play("g58", track: 4, at: hour(58))],
                                     to: LogLayout.hourFilePath(root: workspace.logs, hour: hour(58), segment: "zipped"), gzip: true)
            try workspace.writeLines([play("p58", track: 5, at: hour(58))],
                                     to: LogLayout.hourFilePath(root: workspace.logs, hour: hour(58), segment: "plain", gzip: true))
            let named = try workspace.run()
            #expect(named.ranges == [hours(58, 59)])
            #expect(named.rejections.total == 0)
            #expect(try workspace.plays(4, at: hour(58)) == 1)
            #expect(try workspace.plays(5, at: hour(58)) == 1)
            #expect(try workspace.plays(1, at: hour(58)) == 1)
            #expect(try workspace.run().hours == 0)
        }
    }
}
