import CounterpointCore
import EventLogs
import Foundation
import Patience
import Scratch
import Testing

@Suite("Log discovery", .onTestThreads)
struct LogDiscoveryTests {
    let hour13 = Hour(epochSeconds: 1_795_179_600)      // 2026-11-20T13:00:00Z
    let hour14 = Hour(epochSeconds: 1_795_179_600 + 3_600)

    @Test("a directory is searched recursively and layout files, late files, segments and markers are recognized")
    func recognizesLayout() throws {
        let root = try TemporaryDirectory()
        let gzipped = try systemGzip(Array("{\"a\":1}\n".utf8))
        try root.write("2026-11-20/13.ndjson", "{}\n")
        try root.write("2026-11-20/13.late.ndjson", "{}\n")
        try root.write("2026-11-20/13.seg-01.ndjson.gz", gzipped)
        try root.write("2026-11-20/13.late.seg_2.ndjson", "{}\n")
        try root.write("2026-11-20/13.closed", "")
        try root.write("2026-11-20/14.ndjson", gzipped)               // gzip despite its name
        try root.write("2026-11-20/14.plain.ndjson.gz", "{}\n")       // plain despite its name
        try root.write("2026-11-20/25.ndjson", "{}\n")                // no hour 25: unpartitioned
        try root.write("2026-02-30/01.ndjson", "{}\n")                // no such date: unpartitioned
        try root.write("archive/old/misc.jsonl", "{}\n")
        try root.write("archive/a.json", "{}\n")
        try root.write("archive/b.log", "{}\n")
        try root.write("archive/c.gz", gzipped)
        try root.write("archive/notes.txt", "not a log")
        try root.write("archive/.partial.ndjson", "{}\n")
        try root.write(".hidden/1.ndjson", "{}\n")

        let inventory = try LogDiscovery.inventory(of: [root.path])

        let expected: [(String, Hour?, Bool, Bool)] = [
            ("2026-02-30/01.ndjson", nil, false, false),
            ("2026-11-20/13.late.ndjson", hour13, true, false),
            ("2026-11-20/13.late.seg_2.ndjson", hour13, true, false),
            ("2026-11-20/13.ndjson", hour13, false, false),
            ("2026-11-20/13.seg-01.ndjson.gz", hour13, false, true),
            ("2026-11-20/14.ndjson", hour14, false, true),
            ("2026-11-20/14.plain.ndjson.gz", hour14, false, false),
            ("2026-11-20/25.ndjson", nil, false, false),
            ("archive/a.json", nil, false, false),
            ("archive/b.log", nil, false, false),
            ("archive/c.gz", nil, false, true),
            ("archive/old/misc.jsonl", nil, false, false),
        ]
        #expect(inventory.files.map(\.path) == expected.map { root.path + "/" + $0.0 })
        #expect(inventory.files.map(\.hour) == expected.map(\.1))
        #expect(inventory.files.map(\.isLate) == expected.map(\.2))
        #expect(inventory.files.map(\.isGzip) == expected.map(\.3))
        #expect(inventory.closedHours == [hour13])
        #expect(inventory.isClosed(hour13) && !inventory.isClosed(hour14))
        let sizes = try inventory.files.map { Int64(try FileManager.default.attributesOfItem(atPath: $0.path)[.size] as! UInt64) }
        #expect(inventory.files.map(\.size) == sizes)
        #expect(inventory.totalBytes == sizes.reduce(0, +))
    }

    @Test("files named explicitly are taken whatever their name, and layout names still give their hour")
    func explicitFiles() throws {
        let root = try TemporaryDirectory()
        let text = try root.write("export.txt", "{}\n")
        let hourFile = try root.write("2026-11-20/14.ndjson", "{}\n")
        let marker = try root.write("2026-11-20/13.closed", "")

        let inventory = try LogDiscovery.inventory(of: [text, hourFile, marker])

        #expect(inventory.files.map(\.path) == [hourFile, text])
        #expect(inventory.files.map(\.hour) == [hour14, nil])
        #expect(inventory.closedHours == [hour13])
    }

    @Test("a file reached twice is listed once and the order does not depend on argument order")
    func deterministicOrder() throws {
        let root = try TemporaryDirectory()
        for name in ["b.ndjson", "a.ndjson", "2026-11-20/00.ndjson", "z/c.ndjson"] { try root.write(name, "{}\n") }
        let forward = try LogDiscovery.inventory(of: [root.path, root.path + "/a.ndjson"])
        let backward = try LogDiscovery.inventory(of: [root.path + "/z", root.path])
        #expect(forward.files.count == 4)
        #expect(forward.files.map(\.path).sorted() == forward.files.map(\.path))
        #expect(Set(forward.files.map(\.path)) == Set(backward.files.map(\.path)))
    }

    @Test("a missing path is an error that names it")
    func missingPath() throws {
        let root = try TemporaryDirectory()
        let missing = root.path + "/no-such-dir"
        let error = #expect(throws: EventLogError.self) { try LogDiscovery.inventory(of: [root.path, missing]) }
        #expect(error == .system(path: missing, operation: "read", code: ENOENT))
        #expect(error?.description.contains(missing) == true)
        #expect(error?.description.contains("\n") == false)
    }

    @Test("a path below a regular file is an error that names it")
    func pathBelowFile() throws {
        let root = try TemporaryDirectory()
        let file = try root.write("a.ndjson", "{}\n")
        let error = #expect(throws: EventLogError.self) { try LogDiscovery.inventory(of: [file + "/b.ndjson"]) }
        #expect(error == .system(path: file + "/b.ndjson", operation: "read", code: ENOTDIR))
    }

    @Test("a FIFO named as a log is an error rather than a hang")
    func fifoIsRejected() throws {
        let root = try TemporaryDirectory()
        let fifo = root.path + "/pipe.ndjson"
        #expect(mkfifo(fifo, 0o644) == 0)
        let error = #expect(throws: EventLogError.self) { try LogDiscovery.inventory(of: [fifo]) }
        #expect(error == .notALogFile(path: fifo))
    }

    @Test("a dangling link that looks like a log is an error; one with another name is ignored")
    func danglingLinks() throws {
        let root = try TemporaryDirectory()
        try root.write("2026-11-20/13.ndjson", "{}\n")
        #expect(symlink(root.path + "/gone", root.path + "/stale-link") == 0)
        #expect(try LogDiscovery.inventory(of: [root.path]).files.count == 1)

        let link = root.path + "/2026-11-20/14.ndjson"
        #expect(symlink(root.path + "/gone", link) == 0)
        let error = #expect(throws: EventLogError.self) { try LogDiscovery.inventory(of: [root.path]) }
        #expect(error == .system(path: link, operation: "read", code: ENOENT))
    }

    @Test("a directory link cycle is searched once")
    func linkCycle() throws {
        let root = try TemporaryDirectory()
        try root.write("logs/a.ndjson", "{}\n")
        #expect(symlink(root.path + "/logs", root.path + "/logs/again") == 0)
        #expect(try LogDiscovery.inventory(of: [root.path]).files.map(\.path) == [root.path + "/logs/a.ndjson"])
    }

    // Root reads files whatever their mode bits, so the permission case can only be shown as
    // another user; the unreadable-path cases above cover the error path for root.
    @Test("an unreadable log file is an error that names it", .enabled(if: geteuid() != 0, "root can read mode-000 files"))
    func unreadableFile() throws {
        let root = try TemporaryDirectory()
        let file = try root.write("2026-11-20/13.ndjson", "{}\n")
        #expect(chmod(file, 0) == 0)
        let error = #expect(throws: EventLogError.self) { try LogDiscovery.inventory(of: [root.path]) }
        #expect(error == .system(path: file, operation: "open", code: EACCES))
    }

    @Test("without opening files, discovery finds the same files by stat alone; opened() decides gzip, and finds a plain file's .gz twin once it is gone")
    func statOnlyInventory() throws {
        let root = try TemporaryDirectory()
        let gzipped = try systemGzip(Array("{\"a\":1}\n".utf8))
        try root.write("2026-11-20/13.ndjson", "{}\n")
        try root.write("2026-11-20/13.closed", "")
        try root.write("2026-11-20/14.ndjson", gzipped)               // gzip despite its name
        try root.write("2026-11-20/14.plain.ndjson.gz", "{}\n")       // plain despite its name
        try root.write("2026-11-20/15.p0.ndjson", "{}\n")             // a crash while compressing:
        try root.write("2026-11-20/15.p0.ndjson.gz", gzipped)         // the .gz is complete
        try root.write("archive/c.log", "{}\n")

        let opened = try LogDiscovery.inventory(of: [root.path])
        let statted = try LogDiscovery.inventory(of: [root.path], openingFiles: false)
        #expect(statted.files.map(\.path) == opened.files.map(\.path))
        #expect(statted.files.map(\.hour) == opened.files.map(\.hour))
        #expect(statted.files.map(\.size) == opened.files.map(\.size))
        #expect(statted.files.map(\.modifiedNanoseconds) == opened.files.map(\.modifiedNanoseconds))
        #expect(statted.files.map(\.inode) == opened.files.map(\.inode))
        #expect(statted.closedHours == opened.closedHours)
        #expect(try statted.files.map { try $0.opened() } == opened.files)

        // The archiver replaces 13.ndjson by its .gz after discovery found it.
        let plain = try #require(statted.files.first { $0.path.hasSuffix("/13.ndjson") })
        try root.write("2026-11-20/13.ndjson.gz", gzipped)
        try FileManager.default.removeItem(atPath: plain.path)
        let twin = try plain.opened()
        #expect(twin.path == plain.path + ".gz" && twin.isGzip && twin.hour == plain.hour)
        let gone = try #require(statted.files.first { $0.path.hasSuffix("/c.log") })
        try FileManager.default.removeItem(atPath: gone.path)
        #expect(throws: EventLogError.self) { try gone.opened() }
    }
}

@Suite("Log layout", .onTestThreads)
struct LogLayoutTests {
    let hour = Hour(epochSeconds: 1_795_179_600)      // 2026-11-20T13:00:00Z

    @Test("hour file paths follow the layout and parse back to their hour")
    func pathsRoundTrip() {
        #expect(LogLayout.hourFilePath(root: "/logs", hour: hour) == "/logs/2026-11-20/13.ndjson")
        #expect(LogLayout.hourFilePath(root: "/logs/", hour: hour, gzip: true) == "/logs/2026-11-20/13.ndjson.gz")
        #expect(LogLayout.hourFilePath(root: "r", hour: hour, late: true) == "r/2026-11-20/13.late.ndjson")
        #expect(LogLayout.hourFilePath(root: "r", hour: hour, segment: "p3-000017", gzip: true)
            == "r/2026-11-20/13.p3-000017.ndjson.gz")
        #expect(LogLayout.hourFilePath(root: "r", hour: hour, segment: "s1", late: true) == "r/2026-11-20/13.late.s1.ndjson")
        #expect(LogLayout.closedMarkerPath(root: "r", hour: hour) == "r/2026-11-20/13.closed")
        #expect(LogLayout.hourFilePath(root: "r", hour: Hour(index: 0)) == "r/1970-01-01/00.ndjson")

        for late in [false, true] {
            for segment in [nil, "a", "Z_9-x"] {
                for gzip in [false, true] {
                    let path = LogLayout.hourFilePath(root: "root", hour: hour, segment: segment, late: late, gzip: gzip)
                    let parsed = LogLayout.parse(relativePath: path)
                    #expect(parsed?.hour == hour && parsed?.late == late, "\(path)")
                }
            }
        }
        #expect(LogLayout.parseClosedMarker(relativePath: "2026-11-20/13.closed") == hour)
        #expect(LogLayout.parse(relativePath: "2026-11-20/13.closed") == nil)
    }

    @Test("names outside the layout do not parse", arguments: [
        "13.ndjson", "2026-11-20/24.ndjson", "2026-11-20/1.ndjson", "2026-13-01/01.ndjson",
        "2026-02-29/01.ndjson", "2026-11-20/13.jsonl", "2026-11-20/13.a.b.ndjson", "2026-11-20/13..ndjson",
        "2026-11-20/13.late.late.ndjson", "2026-11-20/13.ndjson.tmp", "2026-11-20/13.se g.ndjson", "2026-1-20/13.ndjson",
    ])
    func rejectsOtherNames(path: String) {
        #expect(LogLayout.parse(relativePath: path) == nil)
        #expect(LogLayout.parseClosedMarker(relativePath: path) == nil)
    }

    @Test("markClosed creates the day directory and a marker that discovery sees")
    func markClosed() throws {
        let root = try TemporaryDirectory()
        try LogLayout.markClosed(root: root.path + "/logs", hour: hour)
        try LogLayout.markClosed(root: root.path + "/logs", hour: hour)  // idempotent
        #expect(FileManager.default.fileExists(atPath: root.path + "/logs/2026-11-20/13.closed"))
        let inventory = try LogDiscovery.inventory(of: [root.path])
        #expect(inventory.closedHours == [hour])
        #expect(inventory.files.isEmpty)
    }
}
