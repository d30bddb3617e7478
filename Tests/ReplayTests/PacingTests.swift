import Foundation
import Patience
import Kafka
@testable import Replay
import Runtime
import Testing

@Suite("Pacing a replay", .onTestThreads)
struct PacingTests {
    @Test("the schedule is anchored to the start, so late wake-ups are made up without drift")
    func scheduleWithoutDrift() {
        let origin = ContinuousClock.now
        var pacer = Pacer(rate: 1_000, origin: origin, maximumBacklog: .seconds(1))
        #expect(pacer.allowance(at: origin, sent: 0) == 1)
        #expect(pacer.allowance(at: origin + .microseconds(999), sent: 1) == 1)
        // A wake-up 7 ms late allows the 7 missed events at once.
        #expect(pacer.allowance(at: origin + .milliseconds(8), sent: 1) == 9)
        #expect(pacer.allowance(at: origin + .seconds(10), sent: 9_990) == 10_001)
        #expect(nearlyEqual(pacer.dueInstant(ofEvent: 10_001), origin + .seconds(10) + .milliseconds(1)))
        #expect(pacer.restarts == 0)
    }

    @Test("falling more than the backlog behind restarts the schedule instead of bursting")
    func backlogRestart() {
        let origin = ContinuousClock.now
        var pacer = Pacer(rate: 100, origin: origin, maximumBacklog: .seconds(1))
        #expect(pacer.maximumBacklog == 100)
        // 5 s in, only 10 sent: 491 would be due, far beyond 100 of backlog.
        let late = origin + .seconds(5)
        #expect(pacer.allowance(at: late, sent: 10) == 11)
        #expect(pacer.restarts == 1)
        #expect(nearlyEqual(pacer.dueInstant(ofEvent: 11), late + .milliseconds(10)))
        #expect(pacer.allowance(at: late + .milliseconds(500), sent: 11) == 61)
    }

    @Test("a paced replay never runs faster than its rate")
    func rateIsHonoured() async throws {
        let cluster = try Fixtures.cluster(partitions: 4)
        let rate = 2_000.0, events = 4_000
        let summary = try Fixtures.replay(.synthetic(.init()), into: cluster) {
            $0.rate = rate
            $0.limit = events
        }
        #expect(summary.events == events)
        #expect(summary.delivered == events)
        #expect(summary.targetRate == rate)
        // Event i is not sent before i / rate seconds: the last one not before (n − 1) / rate.
        #expect(summary.seconds >= Double(events - 1) / rate)
        #expect(summary.eventsPerSecond <= rate * Double(events) / Double(events - 1))
        print("pacing: \(events) events at a target of \(Int(rate))/s took \(String(format: "%.4f", summary.seconds)) s: "
              + "\(String(format: "%.1f", summary.eventsPerSecond)) events/s "
              + "(\(String(format: "%+.2f", (summary.eventsPerSecond / rate - 1) * 100)) %), "
              + "\(summary.scheduleRestarts) schedule restarts, delivery p99 \(summary.latency.percentile(0.99))")
    }

    @Test("a duration stops the replay once it has passed, paced or not")
    func durationStops() async throws {
        let cluster = try Fixtures.cluster(partitions: 2)
        let paced = try Fixtures.replay(.synthetic(.init()), into: cluster) {
            $0.rate = 1_000
            $0.duration = .milliseconds(500)
        }
        #expect(paced.stopReason == .duration)
        #expect(paced.seconds >= 0.5)
        #expect(paced.events <= 501, "no more than the events due within the duration")
        #expect(paced.delivered == paced.events)

        let unpaced = try Fixtures.replay(.synthetic(.init()), into: cluster) { $0.duration = .milliseconds(300) }
        #expect(unpaced.stopReason == .duration)
        #expect(unpaced.seconds >= 0.3)
        #expect(unpaced.targetRate == nil)
        #expect(unpaced.delivered == unpaced.events)
    }

    @Test("stop from another thread ends an endless replay with everything sent delivered")
    func stopFromAnotherThread() async throws {
        let cluster = try Fixtures.cluster(partitions: 2)
        let producer = try Fixtures.producer(cluster)
        var configuration = ReplayConfiguration()
        configuration.rate = 5_000
        let replayer = Replayer(source: .synthetic(.init()), producer: producer, configuration: configuration, logger: Fixtures.logger)
        let progressCalls = Locked(0)
        let stop = StopSignal()
        let outcome = Fixtures.start(replayer, until: stop) { _ in progressCalls.withLock { $0 += 1 } }
        try await eventually(within: .seconds(30), every: .milliseconds(10)) { producer.deliveryStatistics.delivered >= 1_000 }
        stop.request()
        try await eventually(within: .seconds(30), every: .milliseconds(10)) { outcome.value != nil }
        let summary = try #require(try outcome.value?.get())
        #expect(summary.stopReason == .stopped)
        #expect(summary.events >= 1_000)
        #expect(summary.delivered == summary.events)
        #expect(progressCalls.value >= 1)
    }

    @Test("a stop with the broker gone ends the replay after the shorter flush, even with the producer's queue full")
    func stopWithBrokerGone() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        producerConfiguration.connectTimeout = .seconds(5)
        producerConfiguration.options.set("queue.buffering.max.messages", "500")
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: Fixtures.logger)
        var configuration = ReplayConfiguration()
        configuration.flushTimeout = .seconds(600)
        configuration.flushTimeoutAfterStop = .milliseconds(500)
        let replayer = Replayer(source: .synthetic(.init()), producer: producer, configuration: configuration, logger: Fixtures.logger)
        let stop = StopSignal()
        let outcome = Fixtures.start(replayer, until: stop)
        try await eventually(within: .seconds(30), every: .milliseconds(10)) { producer.deliveryStatistics.delivered >= 1_000 }
        try cluster.takeDown(broker: 1)
        // Unpaced, the 500-message queue fills at once; the replayer then waits in send for room.
        try await eventually(within: .seconds(30), every: .milliseconds(10)) { producer.deliveryStatistics.inFlight >= 500 }
        stop.request()
        try await eventually(within: .seconds(60), every: .milliseconds(10)) { outcome.value != nil }
        let summary = try #require(try outcome.value?.get())
        #expect(summary.stopReason == .stopped)
        #expect(summary.flushSeconds < 30, "the flush after a stop waits flushTimeoutAfterStop, not flushTimeout")
        #expect(summary.undelivered > 0, "messages still queued for the missing broker are reported")
        #expect(summary.delivered + summary.failed + summary.undelivered == summary.events,
                "every event sent is delivered, failed or undelivered; the one refused for the stop is not counted")
        // The broker stays down: bringing a mock broker up listens on its old port again, which a
        // test running beside this one may have taken as a client port meanwhile — librdkafka then
        // aborts the whole test process ("Failed to create mock broker listener"). The tests that
        // bring brokers back up run apart (scripts/test).
    }

    @Test("configurations out of range are refused before anything is sent")
    func invalidConfiguration() throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        for configure in [{ (c: inout ReplayConfiguration) in c.rate = -1 }, { $0.limit = -5 }, { $0.topic = "" }, { $0.rate = .infinity }] {
            #expect(throws: ReplayError.self) {
                try Fixtures.replay(.synthetic(.init()), into: cluster, configure: configure)
            }
        }
    }
}

/// Equal within a nanosecond: due instants come from floating-point seconds.
private func nearlyEqual(_ left: ContinuousClock.Instant, _ right: ContinuousClock.Instant) -> Bool {
    let gap: Duration = left - right
    return gap < .nanoseconds(1) && gap > .nanoseconds(-1)
}
