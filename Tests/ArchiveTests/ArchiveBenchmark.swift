@testable import Archive
import CounterpointCore
import Foundation
import Kafka
import Patience
import Testing

/// Archive throughput from the mock cluster into hour files, for comparing changes; off unless
/// asked for: `ARCHIVE_BENCHMARK=1 swift test -c release -Xswiftc -enable-testing --filter ArchiveBenchmark`.
/// The figures depend on the machine and its load: the mock broker, librdkafka's threads and
/// the archiver share the same cores, and fsync speed is the disk's.
@Suite("Archive benchmark", .onTestThreads, .serialized, .enabled(if: ProcessInfo.processInfo.environment["ARCHIVE_BENCHMARK"] != nil, "set ARCHIVE_BENCHMARK=1 to run"))
struct ArchiveBenchmark {
    /// 1 M events of about 190 bytes over 64 partitions stay under the mock's retention (about 5 MiB per partition).
    static let events = 1_000_000
    static let partitions = 64

    @Test("archiving a million events spread over 24 hours from 64 partitions, with and without gzipping closed hours",
          arguments: [false, true])
    func archiveMillion(compress: Bool) async throws {
        let workspace = try ArchiveWorkspace(partitions: Self.partitions)
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: workspace.cluster.bootstrapServers), logger: quietLogger)
        let start = time(0, minute: 0)
        for index in 0..<Self.events {
            let play = Play(eventID: "bench\(index)", track: 1 + Int64(index % 100_000), occurredAt: start + Int64(index) * 86_400_000 / Int64(Self.events))
            try producer.send(topic: workspace.topic, key: Array(String(play.track).utf8), value: Array(play.json.utf8))
        }
        try producer.flush(timeout: .seconds(120))

        let archiver = try workspace.startArchiver(compress: compress)
        var firstSeen: ContinuousClock.Instant?
        let deadline = ContinuousClock.now + .seconds(300)
        while archiver.status().eventsArchived < Self.events, ContinuousClock.now < deadline {
            if firstSeen == nil, archiver.status().eventsArchived > 0 { firstSeen = .now }
            try await Task.sleep(for: .milliseconds(5))
        }
        let finished = ContinuousClock.now
        try archiver.stop()   // finishes compressing the hours this archiver closed
        let status = archiver.status()
        #expect(status.eventsArchived == Self.events)
        let seconds = (finished - (firstSeen ?? finished)).seconds
        let bytes = workspace.archiveFiles().reduce(Int64(0)) { total, path in
            let size = (try? FileManager.default.attributesOfItem(atPath: workspace.logs + "/" + path)[.size] as? Int64) ?? 0
            return total + size
        }
        print("""
            archive benchmark (gzip closed hours: \(compress)): \(Self.events) events, \(Self.partitions) partitions, \(status.closedHours) hours closed, \
            \(bytes / 1_000_000) MB written in \(String(format: "%.2f", seconds)) s → \
            \(Int(Double(Self.events) / max(seconds, 1e-9))) events/s
            """)

        let batchStarted = ContinuousClock.now
        let summary = try workspace.batch(from: hour(0), to: hour(24))
        print("batch over the archive: \(summary.valid) events in \(String(format: "%.2f", (ContinuousClock.now - batchStarted).seconds)) s")
        #expect(summary.valid - summary.duplicates == Self.events)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
