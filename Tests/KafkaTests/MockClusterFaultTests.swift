import Kafka
import KafkaTestSupport
import Patience
import Runtime
import Testing

/// `scripts/test` runs this suite apart from the others, in a test process of its own: it takes
/// mock brokers down, and librdkafka aborts when a child spawned at that moment holds a listener.
@Suite("Faults injected into the mock cluster", .onTestThreads)
struct MockClusterFaultTests {
    @Test("a consumer reports the cluster unreachable while every broker is down and recovers by itself; it reads every message once through a broker down, moved leaders and coordinator, and request errors")
    func connectivityAndExactDelivery() async throws {
        let cluster = try KafkaMockCluster(brokers: 3, logger: Fixtures.logger)
        try cluster.createTopic("plays", partitions: 6)
        try Fixtures.produce(600, to: cluster)
        let health = ComponentHealth(logger: Fixtures.logger)
        var configuration = Fixtures.consumerConfiguration(cluster)
        configuration.healthReport = KafkaHealthReport(health: health, component: "faulted Kafka connection")
        let connection = { health.reports().first { $0.name == "faulted Kafka connection" }?.state }
        let consumer = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        // Progress kept outside Kafka and handed back on assignment, as the realtime store does.
        let consumed = Locked<[ReceivedMessage]>([])
        let handler = ConsumerGroupTests.StoreBackedHandler(name: "faulted", store: Locked([:]), log: Locked([]), consumed: consumed)
        let finished = Locked(false)
        // Ended by `finished`; the limit only bounds a hang, longer than the phases below together.
        let run = Task {
            try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { finished.value }, orAfter: .seconds(600)))
        }
        try await eventually(within: .seconds(120)) { consumed.value.count >= 600 }

        try cluster.takeDown(broker: 2)
        try await Task.sleep(for: .seconds(2))
        try cluster.bringUp(broker: 2)
        for broker in cluster.brokerIDs { try cluster.takeDown(broker: broker) }
        try await eventually(within: .seconds(120)) { connection()?.reason?.contains("brokers are down") == true }
        #expect(connection()?.reason?.contains("brokers are down") == true, "\(String(describing: connection()))")
        for broker in cluster.brokerIDs { try cluster.bringUp(broker: broker) }
        try await eventually(within: .seconds(120)) { connection() == .running }
        #expect(connection() == .running, "\(String(describing: connection()))")
        for partition in Int32(0)..<6 { try cluster.moveLeader(topic: "plays", partition: partition, to: Int(partition) % 3 + 1) }
        try cluster.moveCoordinator(group: "test-group", to: 3)
        for request in [KafkaMockCluster.Request.fetch, .heartbeat, .joinGroup, .syncGroup] {
            cluster.inject(errors: Array(repeating: .typical(for: request), count: 2), on: request)
        }
        cluster.inject(errors: [.disconnect, .disconnect], on: .fetch)
        try cluster.delay(.fetch, on: 1, by: .milliseconds(200), count: 3)
        try Fixtures.produce(600, to: cluster, from: 600)
        try await eventually(within: .seconds(120)) { consumed.value.count >= 1_200 }
        finished.withLock { $0 = true }
        try await run.value

        let received = consumed.value
        #expect(received.count == 1_200)
        #expect(Set(received.map { $0.value! }).count == 1_200, "every message once")
    }

    @Test("a commit while every broker is down gives up after its timeout with a retriable error, and one after they are back lands")
    func commitWhileClusterDown() async throws {
        let cluster = try KafkaMockCluster(brokers: 2, logger: Fixtures.logger)
        try cluster.createTopic("plays", partitions: 1)
        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster, group: "committers"), logger: Fixtures.logger)
        let partition = KafkaPartition(topic: "plays", id: 0)
        try consumer.commit([partition: 5])
        #expect(try consumer.committedOffsets(for: [partition]) == [partition: 5])

        for broker in cluster.brokerIDs { try cluster.takeDown(broker: broker) }
        // librdkafka's own synchronous commit waited a minute and more here, holding the
        // archiver's poll loop; the limit below only bounds a hang.
        let outcome = Locked<Result<Void, KafkaError>?>(nil)
        Task.detached {
            let result = Result { () throws(KafkaError) in try consumer.commit([partition: 7], timeout: .seconds(2)) }
            outcome.withLock { $0 = result }
        }
        let answered = try await eventually(within: .seconds(40)) { outcome.value != nil }
        #expect(answered, "the commit did not give up while the cluster was down")
        guard case .failure(let error)? = outcome.value else {
            if answered { Issue.record("a commit succeeded while every broker was down") }
            return
        }
        #expect(error.isRetriable && !error.isFatal, "\(error)")
        #expect(error.message.contains("no answer from the group coordinator within 2.0 seconds"), "\(error)")
        print("commit while the cluster was down: \(error)")

        for broker in cluster.brokerIDs { try cluster.bringUp(broker: broker) }
        let landed = try await eventually(within: .seconds(60)) { (try? consumer.commit([partition: 9])) != nil }
        #expect(landed)
        // The commit that gave up was still queued in librdkafka, which sends it once the
        // coordinator is back, possibly after the one above: the group may read 7 for a moment,
        // as the timeout's error says ("may still land"). The archiver, the one caller, re-reads
        // from an older offset then, at least once. A commit after that one is the last word.
        var seen: [Int64?] = []
        let settled = try await eventually(within: .seconds(30), every: .milliseconds(100)) {
            let committed = try consumer.committedOffsets(for: [partition])[partition]
            seen.append(committed)
            if committed == 9 { return true }
            _ = try? consumer.commit([partition: 9])
            return false
        }
        #expect(settled, "the group's committed offsets read \(seen)")
        #expect(Set(seen).isSubset(of: [7, 9]), "the group's committed offsets read \(seen)")
        print("committed offsets read after the cluster came back: \(seen)")
    }

    @Test("a fault schedule reads every kind of fault and names what is wrong with a bad one")
    func scheduleParsing() throws {
        let schedule = try KafkaFaultSchedule(parsing: "5:down:2:5, 15:leaders, 20:errors:offset-commit:10, 21:coordinator:3, 22:slow:fetch:4:250, 30:down:all:3, repeat:60")
        #expect(schedule.steps.map(\.fault) == [
            .down(broker: 2, for: .seconds(5)), .moveLeaders, .errors(.offsetCommit, count: 10), .moveCoordinator(to: 3),
            .slow(.fetch, count: 4, by: .milliseconds(250)), .down(broker: nil, for: .seconds(3)),
        ])
        #expect(schedule.steps.map(\.at) == [.seconds(5), .seconds(15), .seconds(20), .seconds(21), .seconds(22), .seconds(30)])
        #expect(schedule.period == .seconds(60))
        #expect(try KafkaFaultSchedule(parsing: "drill") == KafkaFaultSchedule.drill)
        for request in KafkaMockCluster.Request.allCases {
            #expect(try KafkaFaultSchedule(parsing: "1:errors:\(request.flagName):1").steps.first?.fault == .errors(request, count: 1))
        }
        for (bad, complaint) in [("", "no faults"), ("5:explode", "expected down"), ("x:leaders", "SECONDS:FAULT"),
                                 ("1:errors:gossip:3", "unknown request type"), ("1:down:2:0", "positive"),
                                 ("10:leaders,repeat:5", "after the last fault")] {
            do {
                _ = try KafkaFaultSchedule(parsing: bad)
                Issue.record("\"\(bad)\" was accepted")
            } catch {
                #expect("\(error)".contains(complaint), "\(error)")
            }
        }
    }
}
