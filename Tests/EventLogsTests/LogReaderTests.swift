import EventLogs
import Foundation
import Patience
import Scratch
import Testing

@Suite("Log reader", .onTestThreads)
struct LogReaderTests {
    /// Lines of varied lengths, some empty, none containing `\n`.
    static func sampleLines(count: Int, seed: UInt64 = 7) -> [String] {
        var state = seed
        return (0..<count).map { index in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 58)   // 0…63
            return "\(index):" + String(repeating: "x", count: length)
        }
    }

    @Test("lines split across chunk boundaries reassemble exactly", arguments: [1, 2, 3, 7, 64, 4096])
    func reassemblesLines(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        var lines = Self.sampleLines(count: 300)
        lines[10] = ""
        lines[11] = ""
        let path = try directory.write("a.ndjson", lines.joined(separator: "\n") + "\n")
        let reader = try LogReader(path: path, chunkSize: chunkSize)
        #expect(try readLines(reader) == numbered(lines))
        #expect(reader.compressedBytesRead == reader.file.size)
    }

    @Test("gzip lines reassemble exactly whatever the chunk size", arguments: [1, 5, 4096])
    func reassemblesGzipLines(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        let lines = Self.sampleLines(count: 300)
        let path = try directory.write("a.ndjson.gz", try systemGzip(Array((lines.joined(separator: "\n") + "\n").utf8)))
        let reader = try LogReader(path: path, chunkSize: chunkSize)
        #expect(reader.file.isGzip)
        #expect(try readLines(reader) == numbered(lines))
        #expect(reader.compressedBytesRead == reader.file.size)
    }

    @Test("CRLF line ends are delivered as they are, with the carriage return before each newline")
    func crlf() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("crlf.ndjson", "{\"a\":1}\r\n{\"b\":2}\r\n\r\n{\"c\":3}")
        let lines = try readLines(try LogReader(path: path, chunkSize: 3))
        #expect(lines == numbered(["{\"a\":1}\r", "{\"b\":2}\r", "\r", "{\"c\":3}"]))
    }

    @Test("a last line without a newline is delivered")
    func noTrailingNewline() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("a.ndjson", "one\ntwo\nthree")
        #expect(try readLines(try LogReader(path: path)) == numbered(["one", "two", "three"]))
    }

    @Test("an empty file delivers nothing, plain or gzip")
    func emptyFile() throws {
        let directory = try TemporaryDirectory()
        let plain = try directory.write("empty.ndjson", "")
        let gzip = try directory.write("empty.ndjson.gz", try systemGzip([]))
        for path in [plain, gzip] {
            var calls = 0
            try LogReader(path: path).forEachChunk { _, _ in calls += 1 }
            #expect(calls == 0)
        }
    }

    @Test("multi-member gzip, as made by concatenating gzip files, is read through every member")
    func multiMemberGzip() throws {
        let directory = try TemporaryDirectory()
        let first = try systemGzip(Array("a\nb\n".utf8))
        let second = try systemGzip(Array("c\nd".utf8))   // a member may end mid-line
        let third = try systemGzip(Array("e\n".utf8))
        let path = try directory.write("multi.ndjson.gz", first + second + third)
        for chunkSize in [1, 3, 1 << 20] {
            #expect(try readLines(try LogReader(path: path, chunkSize: chunkSize)) == numbered(["a", "b", "c", "de"]))
        }
    }

    @Test("corrupt gzip data is an error naming the file and the offset")
    func corruptGzip() throws {
        let directory = try TemporaryDirectory()
        var bytes = try systemGzip(Array(String(repeating: "{\"event\":1}\n", count: 1000).utf8))
        for index in 12..<40 { bytes[index] ^= 0x5A }
        let path = try directory.write("bad.ndjson.gz", bytes)
        let error = #expect(throws: EventLogError.self) { try readLines(try LogReader(path: path)) }
        guard case let .corruptGzip(errorPath, offset, reason)? = error else {
            Issue.record("expected corruptGzip, got \(String(describing: error))")
            return
        }
        #expect(errorPath == path)
        #expect(offset >= 10 && offset <= Int64(bytes.count))
        #expect(!reason.isEmpty)
        #expect(error!.description.contains(path) && error!.description.contains("\(offset)"))
    }

    @Test("garbage after the last gzip member is an error, not silently ignored")
    func trailingGarbage() throws {
        let directory = try TemporaryDirectory()
        let member = try systemGzip(Array("a\n".utf8))
        let path = try directory.write("tail.ndjson.gz", member + Array("junk".utf8))
        let error = #expect(throws: EventLogError.self) { try readLines(try LogReader(path: path)) }
        guard case let .corruptGzip(_, offset, _)? = error else {
            Issue.record("expected corruptGzip, got \(String(describing: error))")
            return
        }
        #expect(offset >= Int64(member.count))
    }

    @Test("a gzip file cut inside a member is an error naming the file")
    func truncatedGzip() throws {
        let directory = try TemporaryDirectory()
        let bytes = try systemGzip(Array(String(repeating: "{\"event\":1}\n", count: 1000).utf8))
        let path = try directory.write("cut.ndjson.gz", Array(bytes.dropLast(6)))
        let error = #expect(throws: EventLogError.self) { try readLines(try LogReader(path: path)) }
        #expect(error == .truncatedGzip(path: path, offset: Int64(bytes.count - 6)))
    }

    @Test("a line longer than the limit is delivered truncated and the following line numbers stay right",
          arguments: [1, 7, 100, 4096])
    func longLine(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        let long = String(repeating: "L", count: 1_000)
        let text = "first\n" + long + "\nthird\n" + long
        for (name, bytes) in [("long.ndjson", Array(text.utf8)), ("long.ndjson.gz", try systemGzip(Array(text.utf8)))] {
            let path = try directory.write(name, bytes)
            let lines = try readLines(try LogReader(path: path, chunkSize: chunkSize, maxLineBytes: 100))
            let truncated = String(repeating: "L", count: 100)
            #expect(lines == numbered(["first", truncated, "third", truncated]), "\(name)")
        }
    }

    @Test("a line exactly at the limit is delivered whole")
    func lineAtLimit() throws {
        let directory = try TemporaryDirectory()
        let exact = String(repeating: "x", count: 100)
        let path = try directory.write("a.ndjson", exact + "\nnext\n" + exact)
        for chunkSize in [1, 10, 100, 4096] {
            #expect(try readLines(try LogReader(path: path, chunkSize: chunkSize, maxLineBytes: 100))
                == numbered([exact, "next", exact]))
        }
    }

    @Test("reading the same file twice gives the same lines")
    func rereads() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("a.ndjson.gz", try systemGzip(Array("a\nb\n".utf8)))
        let reader = try LogReader(path: path, chunkSize: 2)
        #expect(try readLines(reader) == readLines(reader))
    }

    @Test("opening a missing file is an error naming it")
    func missingFile() throws {
        let directory = try TemporaryDirectory()
        let file = LogFile(path: directory.path + "/gone.ndjson", hour: nil, isLate: false, isGzip: false, size: 0)
        let error = #expect(throws: EventLogError.self) { try LogReader(file: file) }
        #expect(error == .system(path: file.path, operation: "open", code: ENOENT))
    }
}
