import EventLogs
import Foundation
import Patience
import Scratch
import Testing

@Suite("Log writer", .onTestThreads)
struct LogWriterTests {
    let lines = LogReaderTests.sampleLines(count: 2_000) + [String(repeating: "w", count: 5_000)]

    @Test("plain and gzip files round-trip through the reader", arguments: [false, true])
    func roundTrip(gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/deep/er/out.ndjson"
        let writer = try LogWriter(path: path, gzip: gzip, append: false, bufferSize: 1_000)
        for line in lines { try writer.write(line: Array(line.utf8)) }
        try writer.close()

        let reader = try LogReader(path: path, chunkSize: 333)
        #expect(reader.file.isGzip == gzip)
        #expect(try readLines(reader) == numbered(lines))
        #expect(writer.fileSize == reader.file.size)
    }

    @Test("gzip output is standard gzip that the system's gzip decodes")
    func gzipIsStandard() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/out.ndjson.gz"
        let writer = try LogWriter(path: path, gzip: true, append: false, gzipLevel: 6)
        for line in lines { try writer.write(line: Array(line.utf8)) }
        try writer.flush()                       // a member boundary in the middle
        try writer.write(line: Array("after".utf8))
        try writer.close()
        let decoded = try systemGunzip([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(String(decoding: decoded, as: UTF8.self) == (lines + ["after"]).joined(separator: "\n") + "\n")
    }

    @Test("after each flush a gzip file still being written reads as complete gzip")
    func flushEndsMember() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/live.ndjson.gz"
        let writer = try LogWriter(path: path, gzip: true, append: false)
        try writer.write(line: Array("one".utf8))
        try writer.flush()
        #expect(try readLines(try LogReader(path: path)) == numbered(["one"]))
        try writer.write(line: Array("two".utf8))
        try writer.sync()
        #expect(try readLines(try LogReader(path: path)) == numbered(["one", "two"]))
        #expect(writer.fileSize == (try LogFile(path: path)).size)
        try writer.close()
    }

    @Test("appending adds lines after the existing ones, plain or gzip", arguments: [false, true])
    func appends(gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/a.ndjson"
        for batch in [["a", "b"], ["c"], ["d", "e"]] {
            let writer = try LogWriter(path: path, gzip: gzip, append: true)
            for line in batch { try writer.write(line: Array(line.utf8)) }
            try writer.close()
        }
        #expect(try readLines(try LogReader(path: path)) == numbered(["a", "b", "c", "d", "e"]))
    }

    @Test("appending to a plain file that ends mid-line starts a new line first")
    func appendAfterPartialLine() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("a.ndjson", "whole\npart")
        let writer = try LogWriter(path: path, gzip: false, append: true)
        try writer.write(line: Array("next".utf8))
        try writer.close()
        #expect(try readLines(try LogReader(path: path)) == numbered(["whole", "part", "next"]))
    }

    @Test("without append an existing file is replaced")
    func truncates() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("a.ndjson", "old\nold\nold\n")
        let writer = try LogWriter(path: path, gzip: false, append: false)
        try writer.write(line: Array("new".utf8))
        try writer.close()
        #expect(try readLines(try LogReader(path: path)) == numbered(["new"]))
    }

    @Test("sync makes a new file durable and leaves the writer usable")
    func syncs() throws {
        let directory = try TemporaryDirectory()
        for gzip in [false, true] {
            let path = directory.path + "/new/\(gzip).ndjson"
            let writer = try LogWriter(path: path, gzip: gzip, append: false)
            try writer.write(line: Array("x".utf8))
            try writer.sync()
            try writer.sync()
            try writer.write(line: Array("y".utf8))
            try writer.close()
            #expect(try readLines(try LogReader(path: path)) == numbered(["x", "y"]))
        }
    }

    @Test("a writer that cannot create its file fails with an error naming the path")
    func unwritable() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("plain", "x")
        let error = #expect(throws: EventLogError.self) { try LogWriter(path: file + "/sub/a.ndjson", gzip: false, append: false) }
        #expect(error?.description.contains(file) == true)
    }
}
