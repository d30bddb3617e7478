import CounterpointCore
import CounterStore
import Foundation
import HTTPTestClient
import Patience
import Runtime
import StoreTestSupport
import Testing

@Suite("Reader answers during a batch replace", .onTestThreads)
struct ConcurrencyTests {
    /// Track 1 in hours [0, 240): the batch layer at first covers [0, 120) with 3 plays an hour,
    /// realtime has 5 an hour everywhere. The writer then alternates replaces of the whole
    /// [0, 240) with 6 and with 3 plays an hour. 100 other tracks with 1 play an hour make each
    /// replace a transaction of ~24,000 rows.
    static let initialTotal: Int64 = 120 * 3 + 120 * 5   // 960
    static let highTotal: Int64 = 240 * 6                 // 1,440
    static let lowTotal: Int64 = 240 * 3                  // 720
    static let replaceCount = 4

    static func replaceAll(_ batch: any BatchWriter, range: HourRange, trackOnePlays: Int64) throws {
        try batch.replace(range: range, run: standardRun(range, reasons: [:])) { writer in
            var at = range.lower
            while at < range.upper {
                try writer.write(trackID: 1, hour: at, plays: trackOnePlays)
                for track: Int64 in 2...101 { try writer.write(trackID: track, hour: at, plays: 1) }
                at = at.advanced(by: 1)
            }
        }
    }

    @Test("every answer is the old or the new total, never a mix, while a batch replacement runs", arguments: StoreKind.allCases)
    func answersAreAllOldOrAllNew(_ store: StoreKind) throws {
        let valid: Set<Int64> = [Self.initialTotal, Self.highTotal, Self.lowTotal]
        try ReaderFixture.with(store, stores: { batch, realtime in
            try Self.replaceAll(batch, range: hours(0, 120), trackOnePlays: 3)
            _ = try realtime.apply(increments: (0..<240).map { CountRow(id: 1, hour: hour(Int64($0)), plays: 5) },
                                   progress: [], flushedAt: standardFlushedAt)
        }) { reader in
            let results = ResultBox()
            let writerDone = Flag()
            let range = "from=\(time(0))&to=\(time(240))"
            let targets = [
                "/v1/tracks/1/plays?\(range)", "/v1/plays?track_id=1,7,1&\(range)", "/v1/top?limit=1&\(range)",
                "/v1/tracks/1/timeline?\(range)&step=day", "/v1/tracks/1/timeline?\(range)",
            ]
            let backend = reader.store
            let port = reader.server.port

            var clients: [BlockingThread] = []
            for index in 0..<8 {
                let thread = BlockingThread(name: "client-\(index)") {
                    do {
                        let client = try TestClient(port: port)
                        var round = 0
                        // At least a few rounds each, then until the writer is done, then one more.
                        while round < 5 || !writerDone.isSet {
                            let target = targets[(index + round) % targets.count]
                            results.add(try Self.totals(of: client.request(target), target: target))
                            round += 1
                        }
                        let target = targets[index % targets.count]
                        results.add(try Self.totals(of: client.request(target), target: target))
                        // A server thread may answer from snapshots up to `snapshotAge` old
                        // (ReaderConfiguration): once that has passed, every answer is the newest.
                        BlockingThread.sleep(for: .milliseconds(100))
                        results.addFinal(try Self.totals(of: client.request(targets[0]), target: targets[0]))
                    } catch {
                        results.fail("\(error)")
                    }
                }
                clients.append(thread)
            }

            let writer = BlockingThread(name: "writer") {
                defer { writerDone.set() }
                do {
                    let batch = try backend.openBatchWriter()
                    for round in 0..<Self.replaceCount {
                        try Self.replaceAll(batch, range: hours(0, 240), trackOnePlays: round.isMultiple(of: 2) ? 6 : 3)
                    }
                } catch {
                    results.fail("replace failed: \(error)")
                }
            }
            writer.join()
            for client in clients { client.join() }

            let outcome = results.snapshot
            #expect(outcome.failures.isEmpty)
            #expect(outcome.totals.count >= 8 * 6)
            let strays = outcome.totals.filter { !valid.contains($0.total) }
            #expect(strays.isEmpty, "totals that are neither old nor new: \(strays.prefix(10))")
            // The last replace wrote 3 an hour (replaceCount is even), and every client saw it once
            // the snapshot age had passed.
            #expect(outcome.finals.count == 8)
            #expect(outcome.finals.allSatisfy { $0.total == Self.lowTotal })
        }
    }

    /// The totals of track 1 one answer holds (several for /v1/plays, which lists it twice).
    static func totals(of response: TestResponse, target: String) throws -> [Observed] {
        guard response.status == 200 else {
            throw TestClientError(description: "\(target) answered \(response.status): \(response.text)")
        }
        if target.hasPrefix("/v1/tracks/1/plays") {
            return [Observed(target: target, total: try response.decode(TrackPlaysAnswer.self).plays)]
        } else if target.hasPrefix("/v1/tracks/1/timeline") {
            let points = try response.decode(TimelineAnswer.self).points
            return [Observed(target: target, total: points.reduce(0) { $0 + $1.plays })]
        } else if target.hasPrefix("/v1/top") {
            let tracks = try response.decode(TracksAnswer.self).tracks
            return tracks.filter { $0.trackId == 1 }.map { Observed(target: target, total: $0.plays) }
        } else {
            let tracks = try response.decode(TracksAnswer.self).tracks
            return tracks.filter { $0.trackId == 1 }.map { Observed(target: target, total: $0.plays) }
        }
    }
}

struct Observed: Sendable, CustomStringConvertible {
    var target: String
    var total: Int64
    var description: String { "\(total) from \(target)" }
}

/// What the client threads saw, gathered under a lock.
final class ResultBox: Sendable {
    private let seen = Locked((totals: [Observed](), finals: [Observed](), failures: [String]()))

    func add(_ observed: [Observed]) { seen.withLock { $0.totals += observed } }
    func addFinal(_ observed: [Observed]) { seen.withLock { $0.finals += observed } }
    func fail(_ message: String) { seen.withLock { $0.failures.append(message) } }

    var snapshot: (totals: [Observed], finals: [Observed], failures: [String]) { seen.withLock { $0 } }
}

/// A flag one thread sets and others poll.
final class Flag: Sendable {
    private let value = Locked(false)
    func set() { value.set(true) }
    var isSet: Bool { value.value }
}
