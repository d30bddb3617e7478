import Foundation
import Kafka
import Patience
import Replay
import Scratch
import Testing

/// Figures for docs/performance.md, off unless asked for:
/// `REPLAY_BENCHMARK=1 swift test -c release -Xswiftc -enable-testing --filter ReplayBenchmark`.
/// The mock broker, librdkafka's threads and the replay loop share the machine's cores, so the
/// figures are those of this machine under this load, not of a real cluster.
@Suite("Replay benchmark", .onTestThreads, .enabled(if: ProcessInfo.processInfo.environment["REPLAY_BENCHMARK"] != nil, "set REPLAY_BENCHMARK=1 to run"))
struct ReplayBenchmark {
    @Test("as fast as possible: 200-byte events from a log file into the mock cluster")
    func unpaced() async throws {
        try withTemporaryDirectory { directory in
            // 20,000 distinct lines of exactly 200 bytes, looped: parsing and keying are measured
            // with the producing, and 64 partitions keep the mock's retention from deleting anything.
            let lines = (0..<20_000).map { index -> String in
                let line = #"{"event_id":"bench-\#(index)","type":"play","track_id":\#(1 + index % 5_000),"listener_id":987,"occurred_at":"2026-11-20T12:34:56.789Z","position_ms":0,"duration_ms":215000,"client":"ios","country":"DE""#
                return line + #","pad":""# + String(repeating: "x", count: 200 - line.utf8.count - 10) + #""}"#
            }
            #expect(lines.allSatisfy { $0.utf8.count == 200 })
            try Data(lines.joined(separator: "\n").utf8).write(to: directory.appendingPathComponent("bench.ndjson"))
            let cluster = try Fixtures.cluster(partitions: 64)
            let summary = try Fixtures.replay(try ReplaySource.logs(at: [directory.path]), into: cluster) {
                $0.loop = true
                $0.limit = 1_000_000
            }
            #expect(summary.delivered == 1_000_000)
            print("unpaced: \(summary.text)")
        }
    }

    @Test("paced: achieved rate against the target at rising rates")
    func paced() async throws {
        let cluster = try Fixtures.cluster(partitions: 16)
        for rate in [1_000.0, 10_000, 50_000, 100_000] {
            let summary = try Fixtures.replay(.synthetic(.init()), into: cluster) {
                $0.rate = rate
                $0.duration = .seconds(3)
            }
            print("paced \(Int(rate))/s: \(summary.events) events in \(String(format: "%.4f", summary.seconds)) s = "
                  + "\(String(format: "%.1f", summary.eventsPerSecond)) events/s "
                  + "(\(String(format: "%+.3f", (summary.eventsPerSecond / rate - 1) * 100)) %), "
                  + "restarts \(summary.scheduleRestarts), latency p50 \(SummaryFormat.ms(summary.latency.percentile(0.5))) "
                  + "p99 \(SummaryFormat.ms(summary.latency.percentile(0.99))) max \(SummaryFormat.ms(summary.latency.maximum))")
        }
    }
}

enum SummaryFormat {
    static func ms(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.2f ms", (Double(seconds) + Double(attoseconds) / 1e18) * 1e3)
    }
}
