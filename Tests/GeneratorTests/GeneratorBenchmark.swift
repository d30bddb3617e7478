import CounterpointCore
import EventLogs
import Foundation
import Generator
import Patience
import Scratch
import Testing

/// Generator and reader throughput on a realistic data set (10 M events, ~2 GB). Off by
/// default; run with `COUNTERPOINT_BENCHMARKS=1 swift test -c release -Xswiftc -enable-testing --filter GeneratorBenchmark`
/// (`COUNTERPOINT_BENCHMARK_EVENTS` changes the size).
@Suite("Generator benchmark", .onTestThreads, .enabled(if: ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARKS"] != nil))
struct GeneratorBenchmark {
    static let events = ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARK_EVENTS"].flatMap(Int.init) ?? 10_000_000

    @Test("the generator writes events fast, and the reader reads them back fast", arguments: [false, true])
    func throughput(gzip: Bool) throws {
        let root = try TemporaryDirectory()
        var configuration = GeneratorConfiguration()
        configuration.events = Self.events
        configuration.start = Hour(epochSeconds: 1_795_132_800)
        configuration.duplicateRate = 0.01
        configuration.malformedRate = 0.001
        configuration.gzip = gzip
        let summary = try Generator.generate(configuration, into: root.path)
        print(String(format: "[benchmark] generate %@: %d lines in %.2f s = %.2f M events/s, %.1f bytes/line (%.1f on disk), %.0f MB on disk",
                     gzip ? "gzip" : "plain", summary.lines, summary.seconds, Double(summary.events) / summary.seconds / 1e6,
                     Double(summary.uncompressedBytes) / Double(summary.lines), Double(summary.bytes) / Double(summary.lines),
                     Double(summary.bytes) / 1e6))

        let inventory = try LogDiscovery.inventory(of: [root.path])
        var lines = 0
        let start = ContinuousClock.now
        for file in inventory.files {
            try LogReader(file: file).forEachChunk { chunk, _ in
                var cursor = chunk.baseAddress!
                let end = cursor + chunk.count
                while cursor < end, let found = memchr(cursor, 0x0A, cursor.distance(to: end)) {
                    lines += 1
                    cursor = UnsafeRawPointer(found) + 1
                }
            }
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(String(format: "[benchmark] read back %@: %.0f MB uncompressed in %.2f s = %.0f MB/s",
                     gzip ? "gzip" : "plain", Double(summary.uncompressedBytes) / 1e6, seconds,
                     Double(summary.uncompressedBytes) / 1e6 / seconds))
        #expect(lines == summary.lines)
    }
}
