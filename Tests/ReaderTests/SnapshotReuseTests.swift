import CounterpointCore
import CounterStore
import Foundation
import Patience
import Programs
import Runtime
import StoreTestSupport
import Testing

@Suite("Reader snapshot reuse", .onTestThreads)
struct SnapshotReuseTests {
    struct Plays: Decodable { let plays: Int64 }

    @Test("answers are at most the snapshot age older than the stores: a batch commit shows once it has passed", arguments: StoreKind.allCases)
    func commitsShowAfterTheSnapshotAge(_ store: StoreKind) throws {
        try ReaderFixture.with(store, configure: { $0.snapshotAge = .milliseconds(100) }) { fixture in
            let client = try fixture.client()
            func plays() throws -> Int64 {
                let response = try client.request("/v1/tracks/3/plays")
                return try response.decode(Plays.self).plays
            }
            let before = try plays()
            #expect(before == 1)
            let batch = try fixture.store.openBatchWriter()
            try batch.replace(range: hours(-24, 10),
                              run: BatchRun(range: hours(-24, 10), startedAt: 0, finishedAt: 0, eventsRead: 0, valid: 0,
                                            duplicates: 0, rejected: 0, rejectedByReason: [:], tracks: 1, rows: 1)) { writer in
                try writer.write(trackID: 3, hour: hour(1), plays: 40)
            }
            // Within the snapshot age a thread may still answer from its snapshot: old or new,
            // never anything else.
            #expect([before, 40].contains(try plays()))
            BlockingThread.sleep(for: .milliseconds(250))
            #expect(try plays() == 40)
        }
    }

    @Test("an idle server thread's snapshot is released, so the realtime log can be checkpointed to its end")
    func idleSnapshotsAreReleased() throws {
        // SQLite\'s write-ahead log.
        try ReaderFixture.with(.sqlite, configure: { $0.snapshotAge = .milliseconds(50) }) { fixture in
            for _ in 0..<8 { _ = try fixture.get("/v1/tracks/1/plays") }
            // New realtime data after the readers took their snapshots.
            let realtime = try fixture.store.openRealtimeWriter()
            let stored = try realtime.storedOffsets(topic: "plays")
            let progress = stored.map { partition, offset in
                PartitionProgress(topic: "plays", partition: partition, startOffset: offset, nextOffset: offset + 1,
                                  highWatermark: offset + 1)
            }
            #expect(try realtime.apply(increments: [CountRow(id: 1, hour: hour(20), plays: 1)],
                                       progress: progress, flushedAt: standardFlushedAt) == .committed)
            BlockingThread.sleep(for: .milliseconds(300))
            // `busy` (the first column) is 1 when a reader's snapshot pins the log.
            let checkpoint = try Self.sqlite(fixture.location.realtimePath, "PRAGMA wal_checkpoint(TRUNCATE);")
            #expect(checkpoint.hasPrefix("0|"), "checkpoint answered \(checkpoint)")
        }
    }

    static func sqlite(_ path: String, _ sql: String) throws -> String {
        try Program.runBlocking("/usr/bin/sqlite3", [path, sql]).text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
