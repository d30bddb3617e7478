import EventLogs
import Foundation
import Patience
import Runtime
import Scratch
import Testing

@Suite("Log compression", .onTestThreads)
struct LogCompressionTests {
    @Test("compress replaces X by X.gz holding the same bytes, as the system's gunzip reads them, and leaves no temporary file")
    func compressReplacesThePlainFile() throws {
        let directory = try TemporaryDirectory()
        let text = (0..<5_000).map { #"{"event_id":"e\#($0)","type":"play","track_id":\#($0 % 17 + 1)}"# }.joined(separator: "\n") + "\n"
        let path = try directory.write("2026-11-20/10.p0.ndjson", text)
        let done = try LogCompression.compress(path: path)
        #expect(done.path == path + ".gz")
        #expect(done.plainBytes == Int64(text.utf8.count))
        #expect(done.gzipBytes < done.plainBytes / 3)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + LogCompression.temporarySuffix))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: done.path)))
        #expect(try systemGunzip(bytes) == Array(text.utf8))
    }

    @Test("compressing a missing file fails and leaves nothing behind")
    func missingFile() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: EventLogError.self) { try LogCompression.compress(path: directory.path + "/gone.ndjson") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("a plain file compressed after it was found is read from its .gz; a file simply gone still fails")
    func compressedAfterDiscovery() throws {
        let directory = try TemporaryDirectory()
        let lines = (0..<300).map { #"{"event_id":"e\#($0)","type":"play","track_id":7}"# }
        let path = try directory.write("2026-11-20/10.p0.ndjson", lines.joined(separator: "\n") + "\n")
        let found = try #require(LogDiscovery.inventory(of: [directory.path]).files.first)
        try LogCompression.compress(path: path)

        let reader = try LogReader(file: found)
        var read: [String] = []
        try reader.forEachChunk { chunk, _ in
            read += String(decoding: chunk, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        #expect(read == lines)
        #expect(reader.file.path == path + ".gz" && reader.file.isGzip && reader.file.hour == found.hour)

        try FileManager.default.removeItem(atPath: path + ".gz")
        #expect(throws: EventLogError.system(path: path, operation: "open", code: ENOENT)) { try LogReader(file: found) }
    }

    @Test("discovery racing with compression finds every file exactly once, plain or gzip, in every pass")
    func discoveryDuringCompression() throws {
        let directory = try TemporaryDirectory()
        let names = (0..<24).map { String(format: "2026-11-20/%02d.p0.ndjson", $0) }
        for name in names { try directory.write(name, String(repeating: #"{"event_id":"x"}"# + "\n", count: 2_000)) }
        let root = directory.path
        // A thread of its own, not a task: this test's loop keeps its task's thread busy.
        let compressor = BlockingThread(name: "test-compressor") {
            for name in names { _ = try? LogCompression.compress(path: root + "/" + name) }
        }
        var passes = 0
        while true {
            let finished = FileManager.default.fileExists(atPath: root + "/" + names.last! + ".gz")
            let inventory = try LogDiscovery.inventory(of: [root])
            let found = inventory.files.map { String($0.path.dropFirst(root.count + 1)) }
                .map { $0.hasSuffix(".gz") ? String($0.dropLast(3)) : $0 }
            #expect(found == names, "pass \(passes)")
            passes += 1
            if finished { break }
        }
        compressor.join()
        #expect(try LogDiscovery.inventory(of: [root]).files.allSatisfy(\.isGzip))
    }
}
