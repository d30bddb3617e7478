import CounterpointCore
import Foundation
import Patience
import Kafka
import Replay
import Testing

@Suite("Demo traffic for run --demo", .onTestThreads)
struct DemoTrafficTests {
    @Test("demo traffic produces valid events occurring now, keyed by track, until stopped")
    func liveEvents() async throws {
        let cluster = try Fixtures.cluster(partitions: 2)
        let producer = try Fixtures.producer(cluster)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let traffic = DemoTraffic(producer: producer, rate: 2_000, logger: Fixtures.logger)
        try traffic.start()
        try traffic.start()   // a second start changes nothing
        try await eventually(within: .seconds(30), every: .milliseconds(10)) { producer.deliveryStatistics.delivered >= 500 }
        try traffic.stop()
        let summary = try #require(traffic.summary)
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        try traffic.stop()   // a second stop waits for the same end
        #expect(traffic.summary?.events == summary.events, "stopping twice reports the same end")
        #expect(summary.events >= 500)
        #expect(summary.delivered == summary.events)
        #expect(summary.unkeyedEvents == 0)
        #expect(summary.stopReason == .stopped)

        let received = try await Fixtures.consume(summary.events, from: cluster, partitions: 2)
        var eventIDs = Set<EventID>()
        for message in received {
            let event = try EventParser.parse(try #require(message.value)).get()
            #expect((before...after).contains(event.occurredAtMilliseconds))
            #expect(message.keyText == String(event.trackID))
            eventIDs.insert(event.eventID)
        }
        #expect(eventIDs.count == received.count, "event ids are unique")
    }
}
