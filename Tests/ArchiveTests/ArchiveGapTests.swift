@testable import Archive
import CounterpointCore
import Foundation
import Kafka
import Patience
import Testing

@Suite("Archive gaps on the mock broker", .onTestThreads)
struct ArchiveGapTests {
    @Test("messages deleted by retention while the archiver was stopped are counted as skipped, and archiving goes on")
    func retentionGapIsCounted() async throws {
        let workspace = try ArchiveWorkspace(partitions: 1)
        let early = plays(count: 100, from: time(10, minute: 0), to: time(11, minute: 0), duplicateEvery: 0)
        try workspace.produce(early)
        let first = try workspace.startArchiver()
        try await eventually(within: .seconds(30)) { first.status().eventsArchived == early.count }
        try first.stop()
        #expect(first.status().committedOffsets == [0: 100])

        // The mock keeps about 5 MiB per partition: 150 events of 60 KB push the oldest out.
        let padding = String(repeating: "x", count: 60_000)
        let padded: [[UInt8]?] = (0..<150).map { index in
            Array(#"{"event_id":"pad\#(index)","type":"play","track_id":\#(index + 1),"occurred_at":"2026-11-20T10:30:00Z","pad":"\#(padding)"}"#.utf8)
        }
        try workspace.produceRaw(padded, timestampMilliseconds: time(10, minute: 30))
        var watermarks = KafkaConsumerConfiguration(bootstrapServers: workspace.cluster.bootstrapServers,
                                                    groupID: "watermarks", topics: [workspace.topic])
        watermarks.connectTimeout = .seconds(5)
        let low = try KafkaConsumer(configuration: watermarks, logger: quietLogger)
            .queryWatermarks(topic: workspace.topic, partition: 0).low ?? 0
        try #require(low > 100, "the mock deleted nothing that was not archived yet")

        let second = try workspace.startArchiver()
        try await eventually(within: .seconds(30)) {
            let status = second.status()
            return status.committedOffsets[0] == 250 && status.eventsArchived + status.invalidMessages == Int(250 - low)
        }
        let status = second.status()
        try second.stop()
        #expect(status.offsetResets.count == 1)
        #expect(status.gapSkippedMessages == low - 100)
        #expect(status.eventsArchived + status.invalidMessages == Int(250 - low))
    }
}
