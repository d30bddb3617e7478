@testable import Archive
import CounterpointCore
import EventLogs
import Foundation
import LogCapture
import Patience
import Runtime
import Testing

@Suite("Archive → batch on the mock broker", .onTestThreads)
struct ArchiveToBatchTests {
    @Test("events archived from four partitions and rebuilt by batch equal the produced events minus duplicates")
    func archiveThenBatch() async throws {
        let workspace = try ArchiveWorkspace(partitions: 4)
        // Hours 10…13, then one event at 14:30: with 10 minutes of lateness hours 10…13 close, 14 stays open.
        let produced = plays(count: 2_000, from: time(10, minute: 0), to: time(14, minute: 0))
            + [Play(eventID: "tail", track: 1, occurredAt: time(14, minute: 30))]
        try workspace.produce(produced)

        let archiver = try workspace.startArchiver()
        try await eventually(within: .seconds(30)) {
            let status = archiver.status()
            return status.eventsArchived == produced.count && status.closedHours == 4
        }
        try archiver.stop()
        let status = archiver.status()
        #expect(status.eventsArchived == produced.count)
        #expect(status.closedHours == 4 && status.lastClosedHour == hour(13))
        #expect(status.openHours == [hour(14)])
        #expect(status.lateEvents == 0 && status.invalidMessages == 0)
        #expect(!status.isRunning && status.assignedPartitions.isEmpty)

        // The layout: one segment per partition, markers for the closed hours only; the closed
        // hours' files are gzipped once the archiver has stopped, the open hour's are plain.
        let files = workspace.archiveFiles()
        for offset in Int64(10)...13 { #expect(workspace.isClosed(hour(offset)), "hour \(offset) closed") }
        #expect(!workspace.isClosed(hour(14)))
        let dataFiles = files.filter { !$0.hasSuffix(".closed") }
        #expect(dataFiles.allSatisfy { $0.range(of: #"^2026-11-20/1[0-3]\.p[0-3]\.ndjson\.gz$"#, options: .regularExpression) != nil
            || $0.range(of: #"^2026-11-20/14\.p[0-3]\.ndjson$"#, options: .regularExpression) != nil }, "\(files)")
        #expect(Set(dataFiles.map { $0.split(separator: ".")[1] }) == ["p0", "p1", "p2", "p3"])
        // A clean stop commits everything it wrote: every message is in the files exactly once.
        let lines = try dataFiles.flatMap { try workspace.lines(of: $0) }
        #expect(lines.count == produced.count)
        #expect(lines.sorted() == produced.map(\.json).sorted())

        var truth = Truth()
        for play in produced where play.hour < hour(14) { truth.add(play) }
        let summary = try workspace.batch()
        #expect(summary.ranges == [HourRange(hour(10), hour(14))])
        #expect(summary.duplicates == truth.duplicates)
        #expect(Int64(summary.valid - summary.duplicates) == truth.counted)
        #expect(summary.rejections.total == 0)
        for (cell, count) in truth.cells {
            #expect(try workspace.plays(cell.track, at: cell.hour) == count, "\(cell)")
        }
    }

    @Test("an hour closes only once the stream passes its end plus the allowed lateness, and a late event goes to its late file and into the next batch of that hour")
    func closingAndLateEvents() async throws {
        let workspace = try ArchiveWorkspace(partitions: 1)
        let early = plays(count: 100, from: time(10, minute: 0), to: time(11, minute: 0), duplicateEvery: 0)
            + [Play(eventID: "at-11-05", track: 3, occurredAt: time(11, minute: 5))]
        try workspace.produce(early)
        let archiver = try workspace.startArchiver(allowedLateness: .seconds(600))
        try await eventually(within: .seconds(30)) { archiver.status().eventsArchived == early.count }
        // 11:05 is past hour 10's end but not past its end plus 10 minutes.
        #expect(archiver.status().streamTimeMilliseconds == time(11, minute: 5))
        #expect(archiver.status().openHours == [hour(10), hour(11)])
        #expect(!workspace.isClosed(hour(10)))

        let closer = [Play(eventID: "at-11-12", track: 3, occurredAt: time(11, minute: 12))]
        try workspace.produce(closer)
        try await eventually(within: .seconds(30)) { archiver.status().closedHours == 1 }
        #expect(workspace.isClosed(hour(10)))
        #expect(!workspace.isClosed(hour(11)))
        #expect(archiver.status().openHours == [hour(11)])

        let firstBatch = try workspace.batch()
        #expect(firstBatch.ranges == [HourRange(hour(10), hour(11))])
        let track = early[0].track
        let before = try workspace.plays(track, at: hour(10))

        let late = Play(eventID: "late-one", track: track, occurredAt: time(10, minute: 59))
        try workspace.produce([late])
        try await eventually(within: .seconds(30)) { archiver.status().lateEvents == 1 }
        try archiver.stop()
        #expect(try workspace.lines(of: "2026-11-20/10.late.p0.ndjson") == [late.json])
        #expect(!workspace.isClosed(hour(11)))

        let rerun = try workspace.batch(from: hour(10), to: hour(11))
        #expect(rerun.valid == firstBatch.valid + 1)
        #expect(try workspace.plays(track, at: hour(10)) == before + 1)
    }

    @Test("a restarted archiver resumes at its group's committed offsets and closes the hours an earlier run left open")
    func restartResumes() async throws {
        let workspace = try ArchiveWorkspace(partitions: 2)
        let first = plays(count: 600, from: time(10, minute: 0), to: time(11, minute: 30), prefix: "a")
        try workspace.produce(first)
        let archiver = try workspace.startArchiver()
        try await eventually(within: .seconds(30)) {
            archiver.status().eventsArchived == first.count && archiver.status().closedHours == 1
        }
        try archiver.stop()
        #expect(workspace.isClosed(hour(10)) && !workspace.isClosed(hour(11)))

        // Nothing of hour 11 arrives any more: only the adopted open hour can close it.
        let second = plays(count: 400, from: time(12, minute: 0), to: time(12, minute: 30), prefix: "b")
        try workspace.produce(second)
        let restarted = try workspace.startArchiver()
        try await eventually(within: .seconds(30)) {
            restarted.status().eventsArchived >= second.count && restarted.status().closedHours == 1
        }
        try restarted.stop()
        // After a clean stop everything before the committed offsets is archived: no repeats.
        #expect(restarted.status().eventsArchived == second.count)
        #expect(restarted.status().lastClosedHour == hour(11))
        #expect(workspace.isClosed(hour(11)) && !workspace.isClosed(hour(12)))

        var truth = Truth()
        for play in first + second { truth.add(play) }
        let summary = try workspace.batch(from: hour(10), to: hour(13))
        #expect(Int64(summary.valid - summary.duplicates) == truth.counted)
        #expect(summary.duplicates == truth.duplicates)
        for (cell, count) in truth.cells {
            #expect(try workspace.plays(cell.track, at: cell.hour) == count, "\(cell)")
        }
    }

    @Test("messages that are not events are archived in the hour of their Kafka timestamp and counted as rejected by batch; tombstones and blank values are skipped")
    func invalidMessages() async throws {
        let workspace = try ArchiveWorkspace(partitions: 1)
        let pretty = "{\n  \"event_id\": \"pretty\",\r\n  \"type\": \"play\",\n  \"track_id\": 5,\n  \"occurred_at\": \"2026-11-20T10:30:00Z\"\n}"
        let rawNewlineInString = #"{"event_id":"a"# + "\n" + #"b","type":"play","track_id":5,"occurred_at":"2026-11-20T10:31:00Z"}"#
        try workspace.produceRaw([
            Array("not json".utf8),
            Array(#"{"event_id":"no-rest"}"#.utf8),
            nil,
            Array(" \n ".utf8),
            Array(pretty.utf8),
            Array(rawNewlineInString.utf8),
        ], timestampMilliseconds: time(10, minute: 20))
        let closer = Play(eventID: "closer", track: 9, occurredAt: time(11, minute: 30))
        try workspace.produce([closer])

        let archiver = try workspace.startArchiver()
        try await eventually(within: .seconds(30)) { archiver.status().eventsArchived == 2 && archiver.status().closedHours == 1 }
        try archiver.stop()
        let status = archiver.status()
        #expect(status.eventsArchived == 2)
        #expect(status.invalidMessages == 3)
        #expect(status.skippedMessages == 2)

        // Hour 10 closed: its file is gzipped.
        let lines = try workspace.lines(of: "2026-11-20/10.p0.ndjson.gz")
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { !$0.utf8.contains(UInt8(ascii: "\r")) })
        #expect(lines.contains(pretty.replacingOccurrences(of: "\r\n", with: "\t\t").replacingOccurrences(of: "\n", with: "\t")))

        let summary = try workspace.batch()
        #expect(summary.ranges == [HourRange(hour(10), hour(11))])
        #expect(summary.valid == 1)
        #expect(summary.rejections.counts == [.malformedJSON: 2, .missingField: 1])
        #expect(try workspace.plays(5, at: hour(10)) == 1)
    }

    @Test("an event dated in the future is filed in its hour but closes no hour before the clock passes it")
    func eventFromTheFuture() async throws {
        let workspace = try ArchiveWorkspace(partitions: 2)
        let now = WallClock.system.epochMilliseconds()
        let current = Hour(epochMilliseconds: now)
        let future = Play(eventID: "dated-2099", track: 2, occurredAt: 4_070_908_800_000)  // 2099-01-01
        let produced = [Play(eventID: "now-1", track: 1, occurredAt: now), future, Play(eventID: "now-2", track: 1, occurredAt: now)]
        try workspace.produce(produced)
        let archiver = try workspace.startArchiver(allowedLateness: .seconds(60))
        try await eventually(within: .seconds(30)) { archiver.status().eventsArchived == produced.count }
        // Another pass over the partitions, all caught up: the stream time is the clock's.
        try workspace.produce([Play(eventID: "now-3", track: 1, occurredAt: now)])
        try await eventually(within: .seconds(30)) { archiver.status().eventsArchived == produced.count + 1 }
        let streamTime = try #require(archiver.status().streamTimeMilliseconds)
        try archiver.stop()
        #expect(streamTime <= WallClock.system.epochMilliseconds())
        #expect(archiver.status().closedHours == 0)
        #expect(!workspace.isClosed(current))
        #expect(workspace.archiveFiles().contains { $0.hasPrefix("2099-01-01/00.p") })
        #expect(workspace.archiveFiles().allSatisfy { !$0.contains(".late.") })
    }

    @Test("held still, the archiver's clock decides which hours close: events of a past day close only the hours before it")
    func heldClockClosesHoursByItsTime() async throws {
        let workspace = try ArchiveWorkspace(partitions: 1)
        // Held at 2026-11-20 12:30 UTC, days after the events' hours by the real clock.
        let held = (hour(12).epochSeconds + 30 * 60) * 1_000
        let produced = (10...13).map { Play(eventID: "held-\($0)", track: 4, occurredAt: (hour($0).epochSeconds + 60) * 1_000) }
        try workspace.produce(produced)
        let archiver = try workspace.startArchiver(allowedLateness: .seconds(60), clock: .fixed(atEpochMilliseconds: held))
        try await eventually(within: .seconds(30)) { archiver.status().eventsArchived == produced.count }
        // Another pass, all caught up: the stream time is the held clock's, so hours 10 and 11
        // close and 12 and 13 stay open.
        try workspace.produce([Play(eventID: "held-late", track: 4, occurredAt: (hour(12).epochSeconds + 120) * 1_000)])
        try await eventually(within: .seconds(30)) { archiver.status().eventsArchived == produced.count + 1 }
        try await eventually(within: .seconds(30)) { archiver.status().closedHours == 2 }
        try archiver.stop()
        #expect(archiver.status().streamTimeMilliseconds.map { $0 <= held } == true)
        #expect(workspace.isClosed(hour(10)) && workspace.isClosed(hour(11)))
        #expect(!workspace.isClosed(hour(12)) && !workspace.isClosed(hour(13)))
    }

    @Test("a producer whose clock runs ahead makes every event the newest: the archiver warns once, not at every batch")
    func clockAheadWarnedOnce() async throws {
        let workspace = try ArchiveWorkspace(partitions: 1)
        let records = CapturingLogHandler.Records()
        let archiver = try workspace.startArchiver(logger: CapturingLogHandler.logger("archive-tests", into: records))
        let ahead = WallClock.system.epochMilliseconds() + 5 * 60_000
        for round in 0..<4 {
            let plays = (0..<5).map { Play(eventID: "ahead-\(round)-\($0)", track: 3, occurredAt: ahead + Int64(round * 5 + $0) * 1_000) }
            try workspace.produce(plays)
            try await eventually(within: .seconds(30)) { archiver.status().eventsArchived == (round + 1) * 5 }
        }
        try archiver.stop()
        #expect(archiver.status().closedHours == 0)
        let warnings = records.messages(at: .warning).filter { $0.contains("ahead of this machine's clock") }
        #expect(warnings.count == 1, "\(warnings)")
    }

    @Test("an archiver whose log directory cannot be made fails at start, naming it, before any event arrives")
    func unwritableLogRootFailsAtStart() throws {
        let workspace = try ArchiveWorkspace(partitions: 1)
        // A regular file where a directory should be: no directory can be made under it, not even by root.
        let blocker = workspace.root + "/not-a-directory"
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8)))
        var configuration = workspace.configuration()
        configuration.logRoot = blocker + "/logs"
        #expect {
            _ = try Archiver(configuration: configuration, logger: quietLogger)
        } throws: { error in
            "\(error)" == "the log directory cannot be written: cannot create directory \(blocker): File exists"
        }
    }

    @Test("a partition without events does not keep hours open")
    func idlePartition() async throws {
        let workspace = try ArchiveWorkspace(partitions: 3)
        // One track, one key: every event lands in the same partition, the other two stay empty.
        let produced = plays(count: 50, from: time(10, minute: 0), to: time(11, minute: 30), tracks: 1, duplicateEvery: 0)
        try workspace.produce(produced)
        let archiver = try workspace.startArchiver()
        try await eventually(within: .seconds(30)) { archiver.status().closedHours == 1 }
        try archiver.stop()
        #expect(archiver.status().eventsArchived == produced.count)
        #expect(workspace.isClosed(hour(10)) && !workspace.isClosed(hour(11)))
        #expect(Set(workspace.archiveFiles().filter { $0.contains(".ndjson") }.map { $0.split(separator: ".")[1] }).count == 1)
    }
}
