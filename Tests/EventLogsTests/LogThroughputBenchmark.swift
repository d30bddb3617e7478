import EventLogs
import Foundation
import Patience
import Scratch
import Testing

/// Throughput figures for the reader and the writer on a ~500 MB event log. Off by default (it
/// writes a large file and takes CPU); run with
/// `COUNTERPOINT_BENCHMARKS=1 swift test -c release -Xswiftc -enable-testing --filter LogThroughputBenchmark`.
@Suite("Log throughput benchmark", .onTestThreads, .enabled(if: ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARKS"] != nil))
struct LogThroughputBenchmark {
    static let targetBytes = 500 << 20

    /// ~200-byte lines shaped like docs/event-format.md events.
    static func eventLine(_ index: Int) -> [UInt8] {
        let id = String(index, radix: 36).uppercased()
        let padded = String(repeating: "0", count: max(0, 26 - id.count)) + id
        return Array(("{\"event_id\":\"\(padded)\",\"type\":\"play\",\"track_id\":\(index % 10_007 + 1),"
            + "\"listener_id\":\(index % 99_991),\"occurred_at\":\"2026-11-20T12:\(10 + index % 50):\(10 + index % 49).\(100 + index % 900)Z\","
            + "\"position_ms\":0,\"duration_ms\":\(180_000 + index % 60_000),\"client\":\"ios\",\"country\":\"DE\"}").utf8)
    }

    @Test("the reader streams plain and gzip logs fast", arguments: [false, true])
    func readerThroughput(gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + (gzip ? "/bench.ndjson.gz" : "/bench.ndjson")
        // 4,096 line templates whose event ids are rewritten per line: unique lines that gzip
        // about as well as generated logs do, without measuring String formatting.
        let samples = (0..<4_096).map(Self.eventLine)
        let writer = try LogWriter(path: path, gzip: gzip, append: false)
        var written = 0, lineCount = 0
        var line = [UInt8]()
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
        let writeStart = ContinuousClock.now
        while written < Self.targetBytes {
            line = samples[lineCount & 4_095]
            for index in 13..<39 {   // the id's 26 characters
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                line[index] = alphabet[Int(state >> 59)]
            }
            try writer.write(line: line)
            written += line.count + 1
            lineCount += 1
        }
        try writer.close()
        let writeSeconds = Self.seconds(since: writeStart)

        let reader = try LogReader(path: path)
        var linesSeen = 0
        for pass in 0..<2 {   // the first pass warms the page cache
            linesSeen = 0
            let start = ContinuousClock.now
            try reader.forEachChunk { chunk, _ in
                // What the batch does: split lines with memchr.
                var cursor = chunk.baseAddress!
                let end = cursor + chunk.count
                while cursor < end {
                    let found = memchr(cursor, 0x0A, cursor.distance(to: end))
                    linesSeen += 1
                    guard let found else { break }
                    cursor = UnsafeRawPointer(found) + 1
                }
            }
            let seconds = Self.seconds(since: start)
            if pass == 1 {
                print(String(format: "[benchmark] reader %@: %.0f MB uncompressed (%.0f MB on disk) in %.2f s = %.0f MB/s uncompressed",
                             gzip ? "gzip" : "plain", Double(written) / 1e6, Double(reader.file.size) / 1e6,
                             seconds, Double(written) / 1e6 / seconds))
            }
        }
        print(String(format: "[benchmark] writer %@ (level %d): %.0f MB/s uncompressed, %.1f bytes/line on disk",
                     gzip ? "gzip" : "plain", LogWriter.defaultGzipLevel, Double(written) / 1e6 / writeSeconds,
                     Double(reader.file.size) / Double(lineCount)))
        #expect(linesSeen == lineCount)
    }

    @Test("gzip levels trade speed for size", arguments: [1, 6])
    func gzipLevels(level: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/level.ndjson.gz"
        var state: UInt64 = 1
        let lines = (0..<200_000).map { index -> [UInt8] in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Self.eventLine(Int(state >> 40))
        }
        let writer = try LogWriter(path: path, gzip: true, append: false, gzipLevel: level)
        let start = ContinuousClock.now
        for line in lines { try writer.write(line: line) }
        try writer.close()
        let seconds = Self.seconds(since: start)
        let raw = lines.reduce(0) { $0 + $1.count + 1 }
        print(String(format: "[benchmark] gzip level %d: %.0f MB/s, ratio %.2f", level,
                     Double(raw) / 1e6 / seconds, Double(raw) / Double(writer.fileSize)))
        #expect(try LogFile(path: path).isGzip)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
