import Foundation
import Kafka
import Patience
import Replay
import Testing

@Suite("The replay summary", .onTestThreads)
struct SummaryTests {
    @Test("the JSON summary has the counts, the rate and the delivery latency in milliseconds")
    func jsonSummary() throws {
        let cluster = try Fixtures.cluster(partitions: 2)
        let summary = try Fixtures.replay(.synthetic(.init()), into: cluster) { $0.limit = 2_000 }
        let object = summary.jsonObject
        #expect(JSONSerialization.isValidJSONObject(object))
        #expect(object["events"] as? Int == 2_000)
        #expect(object["delivered"] as? Int == 2_000)
        #expect(object["delivery_errors"] as? Int == 0)
        #expect((object["delivery_errors_by_error"] as? [String: Int])?.isEmpty == true)
        #expect(object["undelivered"] as? Int == 0)
        #expect(object["stop_reason"] as? String == "limit")
        #expect(object["target_rate"] is NSNull)
        #expect(object["topic"] as? String == "plays")
        #expect((object["bytes"] as? Int ?? 0) > 2_000 * 150)
        #expect((object["events_per_second"] as? Double ?? 0) > 0)
        let latency = try #require(object["delivery_latency_ms"] as? [String: Double])
        #expect(Set(latency.keys) == ["p50", "p90", "p99", "max", "mean"])
        #expect(latency["p50"]! <= latency["p99"]! && latency["p99"]! <= latency["max"]!)
        #expect(latency["max"]! > 0)
    }

    @Test("the text summary names the rate, the deliveries and the latency percentiles")
    func textSummary() throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        let summary = try Fixtures.replay(.synthetic(.init()), into: cluster) {
            $0.limit = 300
            $0.rate = 10_000
        }
        let text = summary.text
        #expect(text.hasPrefix("replay: sent 300 events"))
        #expect(text.contains("(target 10,000 events/s)"))
        #expect(text.contains("delivered 300, delivery errors 0, undelivered 0"))
        #expect(text.contains("delivery latency p50 "))
        #expect(text.contains("stopped by limit"))
    }
}
