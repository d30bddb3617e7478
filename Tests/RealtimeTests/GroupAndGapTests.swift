import CounterpointCore
import CounterStore
import Foundation
import Kafka
import KafkaTestSupport
import Patience
import Realtime
import StoreTestSupport
import Testing

@Suite("Rebalances, offset gaps and other producers", .onTestThreads)
struct GroupAndGapTests {
    @Test("two consumers in one group over 8 partitions, one stopped and restarted mid-stream, count every event once", arguments: StoreKind.allCases)
    func rebalance(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 8)
            let configuration = Fixtures.configuration(cluster, store: store)
            let plays = try PlayFeed(cluster)

            try plays.produce(20_000, seed: 1)
            let first = try await Fixtures.consumeUntilStored(5_000, configuration: configuration)
            let second = try RealtimeConsumer(configuration: configuration, logger: Fixtures.logger)
            try second.start()
            try plays.produce(20_000, seed: 2)
            try await eventually(within: .seconds(60)) {
                !first.status().assignedPartitions.isEmpty && !second.status().assignedPartitions.isEmpty
            }
            try plays.produce(10_000, seed: 3)
            try first.stop()
            try plays.produce(10_000, seed: 4)
            let restarted = try RealtimeConsumer(configuration: configuration, logger: Fixtures.logger)
            try restarted.start()
            try plays.produce(10_000, seed: 5)
            try await eventually(within: .seconds(60)) {
                !restarted.status().assignedPartitions.isEmpty && !second.status().assignedPartitions.isEmpty
            }
            try plays.produce(10_000, seed: 6)
            try await eventually(within: .seconds(60)) { try StoreContents.storedMessages(configuration.store) >= 80_000 }
            try second.stop()
            try restarted.stop()

            try plays.expectCountedOnce(in: configuration.store, cluster: cluster, partitions: 8)
        }
    }

    @Test("a play taken just before a rebalance revokes its partition is counted once, by the partition's next owner", arguments: StoreKind.allCases)
    func playTakenAtRevocation(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 2)
            let configuration = Fixtures.configuration(cluster, store: store)
            let plays = try PlayFeed(cluster)

            try plays.produce(1_000, seed: 1)
            var heldConfiguration = configuration
            heldConfiguration.kafkaOptions = KafkaClientOptions(PollWindow.debugOptions)
            let window = PollWindow()
            let first = try RealtimeConsumer(configuration: heldConfiguration, logger: window.logger(label: "first"), afterFirstMessage: { window.pass() })
            try first.start()
            try await eventually(within: .seconds(60)) { try StoreContents.storedMessages(configuration.store) >= 1_000 }

            // The first consumer takes the next play and is held there while a second member
            // joins, until the group has queued the revocation of its partitions: the drain of
            // the rest of that batch serves it.
            window.arm()
            try plays.produce(1, seed: 2)
            try await eventually(within: .seconds(60)) { window.isHolding }
            let second = try RealtimeConsumer(configuration: configuration, logger: Fixtures.logger)
            try second.start()
            try await eventually(within: .seconds(60)) { window.revocationIsQueued }
            await window.release()
            try await eventually(within: .seconds(60)) {
                !first.status().assignedPartitions.isEmpty && !second.status().assignedPartitions.isEmpty
            }
            try plays.produce(1_000, seed: 3)
            try await eventually(within: .seconds(60)) { try StoreContents.storedMessages(configuration.store) >= 2_001 }
            try first.stop()
            try second.stop()

            #expect(window.isHolding && window.revocationIsQueued, "the consumer was not held while a revocation was queued")
            try plays.expectCountedOnce(in: configuration.store, cluster: cluster, partitions: 2)
        }
    }

    @Test("offsets deleted by retention while the consumer was stopped are reported as a gap, and consumption goes on", arguments: StoreKind.allCases)
    func offsetGap(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 1)
            let configuration = Fixtures.configuration(cluster, store: store)
            let early = Fixtures.events(100)
            try Fixtures.produce(early.values, to: cluster, partition: 0)
            let first = try await Fixtures.consumeUntilStored(100, configuration: configuration)
            try first.stop()

            // The mock keeps about 5 MiB per partition: 150 events of 60 KB push the oldest out.
            let producer = try Fixtures.producer(cluster)
            let padded = (0..<150).map { index in
                Array(#"{"event_id":"pad\#(index)","type":"play","track_id":\#(index + 1),"occurred_at":1795000000000,"pad":""#.utf8)
                    + [UInt8](repeating: UInt8(ascii: "x"), count: 60_000) + Array(#""}"#.utf8)
            }
            for value in padded {
                try Fixtures.produce([value], with: producer, partition: 0)
            }
            let low = try Fixtures.lowWatermark(cluster, partition: 0) ?? 0
            try #require(low > 100, "the mock deleted events that were not consumed yet")

            let second = try await Fixtures.consumeUntilStored(250, configuration: configuration)
            let status = second.status()
            try second.stop()

            #expect(status.offsetGaps.map { [Int64($0.partition), $0.expectedOffset, $0.resumedOffset] } == [[0, 100, low]])
            #expect(status.skippedEvents == low - 100)
            var expected = early.truth
            for index in Int(low - 100)..<150 {
                expected[CountKey(trackID: Int64(index + 1), hour: Hour(epochMilliseconds: 1_795_000_000_000).index), default: 0] += 1
            }
            let contents = try StoreContents.read(configuration.store)
            #expect(contents.offsets == [0: 250])
            #expect(mismatch(contents.counts, expected) == nil)
        }
    }

    @Test("a partition whose log ends before the stored offset (the topic made again) is read from its start and reported as offsets that went back, with nothing skipped",
          arguments: StoreKind.allCases)
    func offsetsWentBack(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let before = try await Self.countedOnAnEarlierBroker(40, seed: 3, into: store)

            // A new broker: the same topic, made again, with fewer events than were read before.
            let after = Fixtures.events(15, seed: 4, stream: 1)
            let second = try Fixtures.cluster(partitions: 1)
            try Fixtures.produce(after.values, to: second, partition: 0)
            let consumer = try await Fixtures.consumeUntilStored(15, configuration: Fixtures.configuration(second, store: store))
            // Stored offsets of 40 are above 15 until the consumer went back and flushed 15.
            try await eventually(within: .seconds(60)) { try StoreContents.read(store).offsets == [0: 15] }
            let status = consumer.status()
            try consumer.stop()

            #expect(status.offsetGaps.map { [Int64($0.partition), $0.expectedOffset, $0.resumedOffset, $0.skippedEvents] } == [[0, 40, 0, 0]])
            #expect(status.offsetGaps.allSatisfy { $0.wentBack })
            #expect(status.skippedEvents == 0)
            let contents = try StoreContents.read(store)
            #expect(mismatch(contents.counts, before.truth.merging(after.truth, uniquingKeysWith: +)) == nil)
        }
    }

    @Test("offsets an earlier broker left in the store are ignored and forgotten by the first flush, once for every consumer of the process",
          arguments: StoreKind.allCases)
    func earlierBrokerOffsetsForgottenOnce(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let before = try await Self.countedOnAnEarlierBroker(40, seed: 5, into: store)

            // A new broker with more events than the stored offset: read from it, a consumer
            // would start at offset 40 and never count the first 40.
            let new = try Fixtures.cluster(partitions: 1)
            var configuration = Fixtures.configuration(new, store: store)
            configuration.earlierBrokerOffsets = EarlierBrokerOffsets(topic: "plays")
            let early = Fixtures.events(60, seed: 6, stream: 1)
            try Fixtures.produce(early.values, to: new, partition: 0)
            let consumer = try await Fixtures.consumeUntilStored(60, configuration: configuration)
            try await eventually(within: .seconds(60)) { try StoreContents.read(store).offsets == [0: 60] }
            try consumer.stop()

            // The process's next consumer (one made again after a failure) resumes at 60.
            let late = Fixtures.events(10, seed: 7, stream: 2)
            try Fixtures.produce(late.values, to: new, partition: 0)
            try await Fixtures.consumeUntilStored(70, configuration: configuration).stop()

            let contents = try StoreContents.read(store)
            #expect(contents.offsets == [0: 70])
            let truth = before.truth.merging(early.truth, uniquingKeysWith: +).merging(late.truth, uniquingKeysWith: +)
            #expect(mismatch(contents.counts, truth) == nil)
        }
    }

    /// `count` events of one partition on a broker of their own, counted into `store` (which keeps
    /// `count` as the next offset of that broker's partition 0).
    static func countedOnAnEarlierBroker(_ count: Int, seed: UInt64, into store: StoreBackend) async throws -> ProducedEvents {
        let events = Fixtures.events(count, seed: seed)
        let broker = try Fixtures.cluster(partitions: 1)
        try Fixtures.produce(events.values, to: broker, partition: 0)
        try await Fixtures.consumeUntilStored(count, configuration: Fixtures.configuration(broker, store: store)).stop()
        return events
    }

    @Test("events produced by kcat are counted exactly", .enabled(if: OtherClients.hasKcat, "kcat is not installed at /usr/bin/kcat"), arguments: StoreKind.allCases)
    func kcatProducer(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 3)
            let events = Fixtures.events(3_000)
            let input = events.values.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n") + "\n"
            try await OtherClients.kcat(["-P", "-b", cluster.bootstrapServers, "-t", "plays"], input: input)

            let configuration = Fixtures.configuration(cluster, store: store)
            let consumer = try await Fixtures.consumeUntilStored(3_000, configuration: configuration)
            try consumer.stop()
            let contents = try StoreContents.read(configuration.store)
            #expect(contents.storedMessages == 3_000)
            #expect(mismatch(contents.counts, events.truth) == nil)
        }
    }

    @Test("events produced by kafka-python are counted exactly",
          .enabled(if: OtherClients.hasKafkaPython, "kafka-python is not installed for /usr/bin/python3"), arguments: StoreKind.allCases)
    func kafkaPythonProducer(_ kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let cluster = try Fixtures.cluster(partitions: 3)
            let events = Fixtures.events(3_000)
            let script = """
                import sys
                from kafka import KafkaProducer
                producer = KafkaProducer(bootstrap_servers=sys.argv[1])
                for line in sys.stdin.buffer:
                    line = line.rstrip(b"\\n")
                    if line:
                        producer.send("plays", key=line[-8:], value=line)
                producer.flush()
                producer.close()
                """
            let input = events.values.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n") + "\n"
            try await OtherClients.python(script, [cluster.bootstrapServers], input: input)

            let configuration = Fixtures.configuration(cluster, store: store)
            let consumer = try await Fixtures.consumeUntilStored(3_000, configuration: configuration)
            try consumer.stop()
            let contents = try StoreContents.read(configuration.store)
            #expect(contents.storedMessages == 3_000)
            #expect(mismatch(contents.counts, events.truth) == nil)
        }
    }

    /// Produces generated plays through one producer and keeps what they must add up to.
    final class PlayFeed {
        private let producer: KafkaProducer
        private(set) var produced = ProducedEvents()

        init(_ cluster: KafkaMockCluster) throws {
            producer = try Fixtures.producer(cluster)
        }

        func produce(_ count: Int, seed: UInt64) throws {
            let events = Fixtures.events(count, seed: seed)
            try Fixtures.produce(events.values, with: producer)
            produced.append(events)
        }

        /// The store counts every play produced once, and holds the broker's end of each partition.
        func expectCountedOnce(in store: StoreBackend, cluster: KafkaMockCluster, partitions: Int,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
            let contents = try StoreContents.read(store)
            #expect(contents.offsets == (try Fixtures.highWatermarks(cluster, partitions: partitions)), sourceLocation: sourceLocation)
            #expect(mismatch(contents.counts, produced.truth) == nil, sourceLocation: sourceLocation)
        }
    }
}
