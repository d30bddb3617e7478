import CoreMetrics
import CounterpointCore
import CounterStore
import Foundation
import Patience
import Prometheus
import Reader
import Runtime
import StoreTestSupport
import Testing

@Suite("GET /v1/status and /metrics", .onTestThreads)
struct StatusAndMetricsTests {
    @Test("status shows batch coverage, recent runs with rejections by reason, and realtime partitions with lag", arguments: StoreKind.allCases)
    func statusShowsBothLayers(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let response = try reader.get("/v1/status")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            let status = try response.object()

            let batch = try #require(status["batch"] as? [String: Any])
            let coverage = try #require(batch["coverage"] as? [[String: String]])
            #expect(coverage == [["from": time(-24), "to": time(10)], ["from": time(40), "to": time(42)]])
            #expect(batch["covered_until"] as? String == time(42))
            let runs = try #require(batch["runs"] as? [[String: Any]])
            #expect(runs.count == 2)
            #expect(runs.map { $0["from"] as? String } == [time(40), time(-24)])  // newest first
            let first = runs[1]
            #expect(first["to"] as? String == time(10))
            #expect(first["events_read"] as? Int == 150)
            #expect(first["valid"] as? Int == 147)
            #expect(first["duplicates"] as? Int == 4)
            #expect(first["rejected"] as? Int == 3)
            #expect(first["rejected_by_reason"] as? [String: Int] == ["malformed_json": 2, "missing_field": 1])
            #expect(first["tracks"] as? Int == 3 && first["rows"] as? Int == 5)
            #expect(first["started_at"] as? String == UTCTime.format(epochMilliseconds: standardNow - 60_000))
            #expect(first["finished_at"] as? String == UTCTime.format(epochMilliseconds: standardNow - 30_000))
            #expect(runs[0]["rejected_by_reason"] as? [String: Int] == [:])

            let realtime = try #require(status["realtime"] as? [String: Any])
            #expect(realtime["last_flush_at"] as? String == "2026-11-20T12:15:00.123Z")
            #expect(realtime["lag_events"] as? Int == 30)
            let partitions = try #require(realtime["partitions"] as? [[String: Any]])
            #expect(partitions.count == 2)
            #expect(partitions.map { $0["topic"] as? String } == ["plays", "plays"])
            #expect(partitions.map { $0["partition"] as? Int } == [0, 1])
            #expect(partitions.map { $0["next_offset"] as? Int } == [100, 50])
            #expect(partitions.map { $0["high_watermark"] as? Int } == [130, 50])
            #expect(partitions.map { $0["lag"] as? Int } == [30, 0])
            // Without a live consumer in the process there is nothing to say about rejections or rate.
            #expect(realtime["rejected"] is NSNull)
            #expect(realtime["events_per_second"] is NSNull)

            #expect(try response.decode(StatusFreshness.self).freshness == standardFreshness)
        }
    }

    @Test("a status answer is read from one snapshot: while batch runs commit, its coverage, newest run and freshness always agree",
          arguments: StoreKind.allCases)
    func statusReadsOneSnapshot(_ store: StoreKind) throws {
        // Snapshot age 0: every query would take a snapshot of its own.
        try ReaderFixture.with(store, configure: { $0.snapshotAge = .zero }) { reader in
            let runs: Int64 = 40
            let written = Completion<Void>()
            let backend = reader.store
            let writer = BlockingThread(name: "test-batch-runs") {
                written.complete(Result {
                    let batch = try backend.openBatchWriter()
                    for step in 0..<runs {
                        let range = hours(42 + step, 43 + step)
                        let run = BatchRun(range: range, startedAt: 0, finishedAt: 0, eventsRead: 0, valid: 0,
                                           duplicates: 0, rejected: 0, rejectedByReason: [:], tracks: 1, rows: 1)
                        try batch.replace(range: range, run: run) { rows in try rows.write(trackID: 1, hour: range.lower, plays: 1) }
                    }
                })
            }
            defer { writer.join() }
            let client = try reader.client()
            var answers = 0
            var disagreements: [String] = []
            var seen = Set<String>()
            // Until the last run has been seen (or the writer failed), and a bounded number of answers.
            while answers < 5_000 && !seen.contains(time(42 + runs)) && !(written.finished.map { (try? $0.get()) == nil } ?? false) {
                let status = try client.request("/v1/status").object()
                let batch = status["batch"] as? [String: Any] ?? [:]
                let coveredUntil = batch["covered_until"] as? String ?? ""
                let newest = (batch["runs"] as? [[String: Any]])?.first?["to"] as? String ?? ""
                let fresh = (status["freshness"] as? [String: Any])?["batch_covered_until"] as? String ?? ""
                let coverageEnd = (batch["coverage"] as? [[String: String]])?.last?["to"] ?? ""
                if Set([coveredUntil, newest, fresh, coverageEnd]).count != 1 {
                    disagreements.append("covered_until \(coveredUntil), newest run to \(newest), freshness \(fresh), coverage to \(coverageEnd)")
                }
                seen.insert(coveredUntil)
                answers += 1
            }
            try written.wait().get()
            #expect(disagreements.isEmpty, "\(disagreements.count) of \(answers) answers: \(disagreements.prefix(3))")
            #expect(seen.count > 1, "the answers saw the runs commit")
        }
    }

    @Test("the live status of the process appears under realtime: its rate and its rejections with samples", arguments: StoreKind.allCases)
    func liveStatusIsShown(_ store: StoreKind) throws {
        var rejections = RejectionLog()
        // The last payload needs escaping: a quote, a backslash, control bytes and a byte that is not UTF-8.
        let payloads: [[UInt8]] = [Array("{oops".utf8), Array(#"{"type":"play"}"#.utf8), Array("[1]".utf8),
                                   Array("{\"q\":\"a\\\"\n\t\u{1}".utf8) + [0xFF]]
        for (index, payload) in payloads.enumerated() {
            guard case .failure(let rejection) = EventParser.parse(payload) else {
                Issue.record("\(payload) should be rejected")
                return
            }
            payload.withUnsafeBytes { rejections.record(rejection, source: "plays/0@\(11 + index)", payload: $0) }
        }
        let live = LiveStatus(realtime: RealtimeStatus(eventsPerSecond: 1234.5, rejections: rejections))
        try ReaderFixture.with(store, configure: { $0.liveStatus = { live } }) { reader in
            let realtime = try #require(try reader.get("/v1/status").object()["realtime"] as? [String: Any])
            #expect(realtime["events_per_second"] as? Double == 1234.5)
            let rejected = try #require(realtime["rejected"] as? [String: Any])
            #expect(rejected["total"] as? Int == 4)
            #expect(rejected["by_reason"] as? [String: Int] == ["malformed_json": 3, "missing_field": 1])
            let sample = try #require(rejected["sample"] as? [[String: String]])
            #expect(sample.map { $0["source"] } == ["plays/0@11", "plays/0@12", "plays/0@13", "plays/0@14"])
            #expect(sample.map { $0["reason"] } == ["malformed_json", "missing_field", "malformed_json", "malformed_json"])
            #expect(sample.map { $0["payload_prefix"] } == ["{oops", #"{"type":"play"}"#, "[1]", "{\"q\":\"a\\\"\n\t\u{1}\u{FFFD}"])
            #expect(sample.allSatisfy { !($0["message"] ?? "").isEmpty })
        }
    }

    @Test("/v1/status tells offsets skipped over from offsets that went back", arguments: StoreKind.allCases)
    func offsetGapsByKind(_ store: StoreKind) throws {
        let gaps = [
            OffsetGap(topic: "plays", partition: 0, expectedOffset: 100, resumedOffset: 160, detectedAt: 1_795_000_000_000),
            OffsetGap(topic: "plays", partition: 1, expectedOffset: 40, resumedOffset: 0, detectedAt: 1_795_000_001_000),
        ]
        let live = LiveStatus(realtime: RealtimeStatus(offsetGaps: gaps))
        try ReaderFixture.with(store, configure: { $0.liveStatus = { live } }) { reader in
            let realtime = try #require(try reader.get("/v1/status").object()["realtime"] as? [String: Any])
            let listed = try #require(realtime["offset_gaps"] as? [[String: Any]])
            #expect(listed.map { $0["kind"] as? String } == ["skipped", "went_back"])
            #expect(listed.map { $0["skipped_events"] as? Int } == [60, 0])
            #expect(listed.map { $0["resumed_offset"] as? Int } == [160, 0])
        }
    }

    @Test("/v1/status names the latest hour holding merged plays and its layer: a realtime row in a covered hour does not count; null for an empty store",
          arguments: StoreKind.allCases)
    func latestCountsFollowTheMergeRule(_ store: StoreKind) throws {
        // One store, written step by step; snapshot age 0, so each answer sees the last step.
        try ReaderFixture.with(store, stores: { _, _ in }, configure: { $0.snapshotAge = .zero }) { reader in
            let batch = try reader.store.openBatchWriter()
            let realtime = try reader.store.openRealtimeWriter()
            func latest() throws -> Any? { try reader.get("/v1/status").object()["latest_counts"] }
            func flush(_ rows: [(track: Int64, hour: Int64, plays: Int64)]) throws {
                _ = try realtime.apply(increments: rows.map { CountRow(id: $0.track, hour: hour($0.hour), plays: $0.plays) },
                                       progress: [], flushedAt: standardFlushedAt)
            }

            // Nothing written: null, and the key is there.
            let empty = try reader.get("/v1/status").object()
            #expect(empty.keys.contains("latest_counts") && empty["latest_counts"] is NSNull)

            // A batch run that covered hours without plays, and a realtime row in one of them: still nothing counted.
            try batch.replace(range: hours(0, 10), run: standardRun(hours(0, 10), reasons: [:])) { _ in }
            try flush([(1, 3, 6)])
            var answer = try latest()
            #expect(answer is NSNull, "\(answer ?? "nil")")

            // Uncovered realtime rows: the latest of them.
            try flush([(1, -30, 1), (2, -2, 4)])
            answer = try latest()
            #expect(answer as? [String: String] == ["hour": time(-2), "source": "realtime"])

            // Batch rows at hours 2 and 4; realtime rows later than both but all in covered hours
            // (hour 8 inside the range holding the rows, hour 22 in a range without any): hour 4, from batch.
            try batch.replace(range: hours(0, 10), run: standardRun(hours(0, 10), reasons: [:])) {
                try $0.write(trackID: 1, hour: hour(4), plays: 3)
                try $0.write(trackID: 2, hour: hour(2), plays: 5)
            }
            try batch.replace(range: hours(20, 24), run: standardRun(hours(20, 24), reasons: [:])) { _ in }
            try flush([(1, 22, 7), (3, 8, 9)])
            answer = try latest()
            #expect(answer as? [String: String] == ["hour": time(4), "source": "batch"])

            // An uncovered realtime hour after the batch's: it, from realtime.
            try flush([(4, 15, 2), (5, 12, 1)])
            answer = try latest()
            #expect(answer as? [String: String] == ["hour": time(15), "source": "realtime"])
        }
    }

    @Test("/metrics serves the exposition closure verbatim as Prometheus text", arguments: StoreKind.allCases)
    func metricsClosureIsServedVerbatim(_ store: StoreKind) throws {
        let exposition = "# TYPE fixed_total counter\nfixed_total{kind=\"a\"} 42\n"
        try ReaderFixture.with(store, configure: { $0.metricsExposition = { exposition } }) { reader in
            let response = try reader.get("/metrics")
            #expect(response.status == 200)
            #expect(response.text == exposition)
            #expect(response.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        }
    }

    @Test("/metrics counts HTTP requests by route template and status", arguments: StoreKind.allCases)
    func requestsAreCountedByRouteAndStatus(_ store: StoreKind) throws {
        let registry = try #require(sharedPrometheusRegistry, "the process's MetricsSystem was bootstrapped elsewhere")
        try ReaderFixture.with(store, configure: { $0.metricsExposition = { registry.emitToString() } }) { reader in
            #expect(try reader.get("/v1/tracks/1/plays").status == 200)
            #expect(try reader.get("/v1/tracks/2/plays").status == 200)
            #expect(try reader.get("/v1/tracks/0/plays").status == 400)
            #expect(try reader.get("/v1/nowhere").status == 404)
            #expect(try reader.get("/v1/top", method: "DELETE").status == 405)
            #expect(try reader.get("/v1/top?limit=" + String(repeating: "1", count: 9_000)).status == 414)

            let text = try reader.get("/metrics").text
            let requests = text.split(separator: "\n").filter { $0.hasPrefix("counterpoint_http_requests_total{") }
            func count(route: String, status: Int) -> Double? {
                requests.first { $0.contains("route=\"\(route)\"") && $0.contains("status=\"\(status)\"") }
                    .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
            }
            // Other tests share the process's registry, so counts are at least, not exactly, these.
            #expect((count(route: "/v1/tracks/{id}/plays", status: 200) ?? 0) >= 2)
            #expect((count(route: "/v1/tracks/{id}/plays", status: 400) ?? 0) >= 1)
            #expect((count(route: "unmatched", status: 404) ?? 0) >= 1)
            #expect((count(route: "/v1/top", status: 405) ?? 0) >= 1)
            // Requests the HTTP layer refuses before routing are requests too.
            #expect(requests.contains { $0.contains("status=\"414\"") }, "414 answers are not counted")
            #expect(!requests.contains { $0.contains("/v1/tracks/1/") }, "per-track paths must not become labels")
            #expect(text.contains("counterpoint_http_request_duration_seconds"))
        }
    }
}

private struct StatusFreshness: Decodable {
    var freshness: FreshnessAnswer
}

/// The Prometheus registry behind the process's MetricsSystem. MetricsSystem can be bootstrapped
/// once per process, so this happens once, on first use; nil if something else bootstrapped it.
let sharedPrometheusRegistry: PrometheusCollectorRegistry? = {
    guard MetricsSystem.factory is NOOPMetricsHandler else { return nil }
    let registry = PrometheusCollectorRegistry()
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    return registry
}()
