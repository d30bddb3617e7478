import Foundation
import Kafka
import KafkaTestSupport
import Logging
import Runtime

enum Fixtures {
    /// Quiet by default: librdkafka's connection chatter would drown test output.
    static let logger = Logger(label: "kafka-tests") { _ in SwiftLogNoOpLogHandler() }

    static func cluster(topic: String = "plays", partitions: Int) throws -> KafkaMockCluster {
        let cluster = try KafkaMockCluster(logger: logger)
        try cluster.createTopic(topic, partitions: partitions)
        return cluster
    }

    static func consumerConfiguration(_ cluster: KafkaMockCluster, group: String = "test-group", topic: String = "plays") -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupID: group, topics: [topic])
        // The mock waits for every member to rejoin; fast heartbeats make rebalances quick.
        configuration.sessionTimeoutMilliseconds = 6_000
        configuration.heartbeatIntervalMilliseconds = 500
        configuration.connectTimeout = .seconds(5)
        configuration.options.set("max.poll.interval.ms", String(KafkaMockCluster.consumerMaxPollIntervalMilliseconds))
        return configuration
    }

    /// Produces `count` messages keyed "k<i>" with value "v<i>" and waits for their delivery.
    @discardableResult
    static func produce(_ count: Int, to cluster: KafkaMockCluster, topic: String = "plays", from start: Int = 0) throws -> [(key: [UInt8], value: [UInt8])] {
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: logger)
        let messages = (start..<start + count).map { (key: Array("k\($0)".utf8), value: Array("v\($0)".utf8)) }
        for message in messages {
            try producer.send(topic: topic, key: message.key, value: message.value)
        }
        try producer.flush(timeout: .seconds(10))
        return messages
    }

    /// Runs the blocking consumer loop on its own thread, as the service does, and waits for it.
    static func run(_ consumer: KafkaConsumer, handler: some KafkaConsumerHandler & Sendable, until shouldStop: @escaping @Sendable () -> Bool) async throws {
        try await BlockingThread.run(name: "test-consumer") { try consumer.run(until: shouldStop, handler: handler) }
    }

    /// A stop condition that also gives up after `limit`, so a broken consumer fails the test instead of hanging it.
    /// Generous: the whole suite shares two cores with browser, database and process tests, and
    /// a group join on a starved mock broker has been seen to take over 30 s.
    static func stop(when condition: @escaping @Sendable () -> Bool, orAfter limit: Duration = .seconds(120)) -> @Sendable () -> Bool {
        let deadline = ContinuousClock.now + limit
        return { condition() || ContinuousClock.now >= deadline }
    }
}

/// Records everything a consumer hands it; starts partitions where `startOffsets` says.
final class RecordingHandler: KafkaConsumerHandler, Sendable {
    enum Event: Equatable {
        case assigned([KafkaPartition])
        case revoking([KafkaPartition], KafkaRevocationReason)
    }

    let messages = Locked<[ReceivedMessage]>([])
    let events = Locked<[Event]>([])
    let resets = Locked<[KafkaOffsetReset]>([])
    let timestamps = Locked<[Int64?]>([])
    let startOffsets: Locked<[KafkaPartition: Int64]>
    /// Called with each event, for tests that order events across consumers.
    let onEvent: @Sendable (Event) -> Void

    init(startOffsets: [KafkaPartition: Int64] = [:], onEvent: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.startOffsets = Locked(startOffsets)
        self.onEvent = onEvent
    }

    var count: Int { messages.withLock { $0.count } }

    func assigned(_ partitions: [KafkaPartition]) throws -> [KafkaPartition: Int64] {
        record(.assigned(partitions.sorted()))
        return startOffsets.value
    }

    func revoking(_ partitions: [KafkaPartition], reason: KafkaRevocationReason) throws {
        record(.revoking(partitions.sorted(), reason))
    }

    func consume(_ batch: KafkaMessageBatch) throws {
        let copies = batch.map(ReceivedMessage.init)
        messages.withLock { $0.append(contentsOf: copies) }
        timestamps.withLock { $0.append(contentsOf: batch.map(\.timestampMilliseconds)) }
    }

    func offsetReset(_ reset: KafkaOffsetReset) throws {
        resets.withLock { $0.append(reset) }
    }

    private func record(_ event: Event) {
        events.withLock { $0.append(event) }
        onEvent(event)
    }
}
