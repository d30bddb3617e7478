import CounterpointCore
import EventLogs
import Foundation
import Kafka
import Patience
import Replay
import Scratch
import Testing

@Suite("Replaying log files into Kafka", .onTestThreads)
struct DeliveryTests {
    @Test("every line of the logs arrives exactly once, keyed by its track id, in order within each partition")
    func everyLineOnceInOrder() async throws {
        try await withTemporaryDirectory { directory in
            try Fixtures.generate(into: directory, events: 3_000, malformed: 0.02)
            let lines = try Fixtures.eventLines(under: [directory.path])
            let cluster = try Fixtures.cluster(partitions: 4)

            let summary = try Fixtures.replay(try ReplaySource.logs(at: [directory.path]), into: cluster)
            let invalid = lines.filter { trackID(of: $0) == nil }.count
            #expect(summary.events == lines.count)
            #expect(summary.bytes == lines.reduce(0) { $0 + $1.count })
            #expect(summary.unkeyedEvents == invalid)
            #expect(invalid > 0, "the logs hold malformed lines")
            #expect(summary.delivered == lines.count)
            #expect(summary.failed == 0 && summary.undelivered == 0)
            #expect(summary.stopReason == .endOfLogs)
            #expect(summary.passes == 1)
            #expect(summary.latency.count == lines.count)

            let received = try await Fixtures.consume(lines.count, from: cluster, partitions: 4)
            #expect(received.count == lines.count)
            var expectedCounts: [[UInt8]: Int] = [:]
            for line in lines { expectedCounts[line, default: 0] += 1 }
            var receivedCounts: [[UInt8]: Int] = [:]
            for message in received { receivedCounts[message.value ?? [], default: 0] += 1 }
            #expect(receivedCounts == expectedCounts, "each line arrives as often as it is in the logs")

            for message in received {
                let value = try #require(message.value)
                #expect(message.keyText == trackID(of: value).map { String($0) }, "valid events are keyed by track id, others have no key")
            }
            let partitionsByKey = Dictionary(grouping: received.filter { $0.key != nil }, by: \.keyText)
                .mapValues { Set($0.map(\.partition)) }
            #expect(partitionsByKey.values.allSatisfy { $0.count == 1 }, "all events of a track land in one partition")
            #expect(partitionsByKey.count > 1)

            // Lines that occur once in the logs have one position; per partition they must come in that order.
            let position = Dictionary(lines.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { _, _ in -1 })
            for partition in Int32(0)..<4 {
                let inPartition = received.filter { $0.partition == partition }.sorted { $0.offset < $1.offset }
                let positions = inPartition.compactMap { position[$0.value ?? []] }.filter { $0 >= 0 }
                #expect(positions == positions.sorted(), "partition \(partition) holds its lines in log order")
            }
        }
    }

    @Test("lines that are not events are produced without a key, blank lines are skipped")
    func invalidAndBlankLines() async throws {
        try await withTemporaryDirectory { directory in
            let valid = #"{"event_id":"e1","type":"play","track_id":42,"occurred_at":"2026-11-20T12:00:00Z"}"#
            let lines = [valid, "not json", "", "   ", #"{"type":"play"}"#, "\r", #"{"event_id":"e2","type":"skip","track_id":7,"occurred_at":1795000000000}"#]
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: directory.appendingPathComponent("events.ndjson"))
            let cluster = try Fixtures.cluster(partitions: 1)

            let summary = try Fixtures.replay(try ReplaySource.logs(at: [directory.path]), into: cluster)
            #expect(summary.events == 4)
            #expect(summary.unkeyedEvents == 3)
            #expect(summary.blankLinesSkipped == 3)
            #expect(summary.delivered == 4)

            let received = try await Fixtures.consume(4, from: cluster, partitions: 1).sorted { $0.offset < $1.offset }
            #expect(received.map { String(decoding: $0.value ?? [], as: UTF8.self) } == [lines[0], lines[1], lines[4], lines[6]])
            #expect(received.map(\.keyText) == ["42", nil, nil, nil])
        }
    }

    @Test("gzip logs are replayed line for line like plain ones")
    func gzipLogs() async throws {
        try await withTemporaryDirectory { directory in
            try Fixtures.generate(into: directory, events: 1_000, malformed: 0.01, gzip: true)
            let files = try LogDiscovery.inventory(of: [directory.path]).files
            #expect(!files.isEmpty && files.allSatisfy(\.isGzip))
            let lines = try Fixtures.eventLines(under: [directory.path])
            let cluster = try Fixtures.cluster(partitions: 2)

            let summary = try Fixtures.replay(.logFiles(files), into: cluster)
            #expect(summary.events == lines.count)
            #expect(summary.delivered == lines.count)

            let received = try await Fixtures.consume(lines.count, from: cluster, partitions: 2)
            #expect(received.compactMap(\.value).sorted { $0.lexicographicallyPrecedes($1) }
                    == lines.sorted { $0.lexicographicallyPrecedes($1) })
        }
    }

    @Test("with loop the logs start again at their end, until the limit")
    func loopRepeats() async throws {
        try await withTemporaryDirectory { directory in
            let lines = (1...10).map { #"{"event_id":"loop\#($0)","type":"play","track_id":\#($0),"occurred_at":1795000000000}"# }
            try Data((lines.joined(separator: "\n")).utf8).write(to: directory.appendingPathComponent("a.ndjson"))
            let cluster = try Fixtures.cluster(partitions: 1)

            let summary = try Fixtures.replay(try ReplaySource.logs(at: [directory.path]), into: cluster) {
                $0.loop = true
                $0.limit = 35
            }
            #expect(summary.events == 35)
            #expect(summary.passes == 4)
            #expect(summary.stopReason == .limit)
            #expect(summary.delivered == 35)

            let received = try await Fixtures.consume(35, from: cluster, partitions: 1).sorted { $0.offset < $1.offset }
            let expected = (0..<35).map { lines[$0 % 10] }
            #expect(received.map { String(decoding: $0.value ?? [], as: UTF8.self) } == expected)
        }
    }

    @Test("without loop the logs are replayed once, and a limit stops earlier")
    func limitWithoutLoop() async throws {
        try withTemporaryDirectory { directory in
            try Fixtures.generate(into: directory, events: 500)
            let cluster = try Fixtures.cluster(partitions: 2)
            let source = try ReplaySource.logs(at: [directory.path])
            let whole = try Fixtures.replay(source, into: cluster)
            #expect(whole.events == 500 && whole.passes == 1 && whole.stopReason == .endOfLogs)
            let limited = try Fixtures.replay(source, into: cluster) { $0.limit = 120 }
            #expect(limited.events == 120 && limited.delivered == 120 && limited.stopReason == .limit)
        }
    }

    @Test("a corrupt gzip file ends the replay with an error naming it, after the events before it")
    func corruptGzip() async throws {
        try await withTemporaryDirectory { directory in
            let valid = #"{"event_id":"g1","type":"play","track_id":9,"occurred_at":1795000000000}"#
            try Data((valid + "\n").utf8).write(to: directory.appendingPathComponent("a.ndjson"))
            let corrupt = directory.appendingPathComponent("b.ndjson.gz")
            try Data([0x1F, 0x8B, 0x08, 0x00] + [UInt8](repeating: 0xEE, count: 64)).write(to: corrupt)
            let cluster = try Fixtures.cluster(partitions: 1)
            #expect {
                try Fixtures.replay(try ReplaySource.logs(at: [directory.path]), into: cluster)
            } throws: { error in
                guard case .logs(let message) = error as? ReplayError else { return false }
                return message.contains(corrupt.path)
            }
            let received = try await Fixtures.consume(1, from: cluster, partitions: 1)
            #expect(received.map { String(decoding: $0.value ?? [], as: UTF8.self) } == [valid])
        }
    }

    @Test("no logs under the paths, or a missing path, is an error naming them")
    func missingLogs() async throws {
        try withTemporaryDirectory { directory in
            #expect {
                try ReplaySource.logs(at: [directory.path])
            } throws: { error in
                guard case .noLogs(let paths) = error as? ReplayError else { return false }
                return paths == [directory.path] && "\(error)".contains(directory.path)
            }
            let missing = directory.appendingPathComponent("nowhere").path
            #expect {
                try ReplaySource.logs(at: [missing])
            } throws: { error in
                guard case .logs = error as? ReplayError else { return false }
                return "\(error)".contains(missing)
            }
        }
    }
}
