import Archive
import CounterpointCore
import CounterStore
import Foundation
import Generator
import Kafka
import Logging
import Reader
import Realtime
import Replay
import Runtime

/// `counterpoint run`: the realtime consumer, the archiver, the scheduled batch, the reader and,
/// for a demo, live traffic — on an embedded broker unless `configuration.brokers` names one.
///
/// Builds everything off the cooperative pool (the broker, the demo history, the stores and the
/// consumers block), after a first batch run over what the logs already hold. The services start
/// in the order consumer, archiver, scheduled batch, demo traffic, reader, and stop in the
/// reverse one; the embedded broker outlives all of them. With `embeddedFaults` the faults start
/// once everything is built and stop, every broker up again, once every service has stopped.
/// - Parameter onListening: called with the reader's port once everything has started.
public func buildRun(_ configuration: RunConfiguration, logger: Logger,
                     onListening: (@Sendable (_ port: Int) -> Void)? = nil) async throws -> Application {
    try await BlockingThread.run(name: "build") {
        // On its embedded broker, the run owns its data directory: the realtime store's offsets
        // are that broker's, which a second run there would forget (`EarlierBrokerOffsets`).
        let claim = try configuration.brokers == nil ? claimDataDirectory(configuration.dataDirectory) : nil
        // The broker: the one given, or an embedded one that outlives every client of it (if
        // building fails, the clients made so far are released before it).
        var embedded: KafkaMockCluster?
        if configuration.brokers == nil {
            let cluster = try KafkaMockCluster(brokers: configuration.embeddedFaults == nil ? 1 : 3, logger: logger)
            try cluster.createTopic(configuration.topic, partitions: configuration.partitions)
            embedded = cluster
        }
        let bootstrapServers = configuration.brokers ?? embedded?.bootstrapServers ?? ""
        if let events = configuration.demoHistoryEvents {
            try generateDemoHistory(events: events, into: configuration.logDirectory, clock: configuration.clock, logger: logger)
        }
        let health = ComponentHealth(logger: logger, clock: configuration.clock)
        let (services, readerPort) = try runServices(configuration, bootstrapServers: bootstrapServers,
                                                     embedded: embedded != nil, health: health, logger: logger,
                                                     onListening: onListening)
        let faults = embedded.flatMap { startFaults(configuration, on: $0, logger: logger) }
        return Application(services: services, health: health, readerPort: readerPort,
                           bootstrapServers: bootstrapServers, broker: embedded, claim: claim, logger: logger) {
            guard let faults else { return }
            faults.stop()
            let injected = faults.injectedByKind.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            logger.info("kafka faults injected", metadata: ["kafka.faults_injected": "\(injected.joined(separator: ","))"])
        }
    }
}

/// Starts injecting `configuration.embeddedFaults` into the embedded broker, on the topic's
/// partitions and the coordinators of the realtime and archive groups; nil without faults.
private func startFaults(_ configuration: RunConfiguration, on cluster: KafkaMockCluster,
                         logger: Logger) -> KafkaFaultInjector? {
    guard let schedule = configuration.embeddedFaults else { return nil }
    let injector = KafkaFaultInjector(cluster: cluster, topic: configuration.topic, partitions: configuration.partitions,
                                      groups: [RealtimeConfiguration.defaultGroup, ArchiverConfiguration.defaultGroupID],
                                      logger: logger)
    injector.start(schedule)
    return injector
}

/// The components of `run`, as services in start order, and the reader's port.
private func runServices(_ configuration: RunConfiguration, bootstrapServers: String, embedded: Bool,
                         health: ComponentHealth, logger: Logger,
                         onListening: (@Sendable (Int) -> Void)?) throws -> ([ComponentService], Int) {
    let store = configuration.store
    let batch = ScheduledBatch(logDirectory: configuration.logDirectory, store: store,
                               scratchDirectory: configuration.dataDirectory, interval: configuration.batchInterval, clock: configuration.clock,
                               health: health.handle(for: "scheduled batch"), logger: logger)
    batch.runOnce()

    var realtimeConfiguration = RealtimeConfiguration(bootstrapServers: bootstrapServers, store: store)
    realtimeConfiguration.topic = configuration.topic
    realtimeConfiguration.flushInterval = configuration.flushInterval
    realtimeConfiguration.sessionTimeoutMilliseconds = configuration.sessionTimeoutMilliseconds
    let consumerHealth = health.handle(for: "consumer")
    realtimeConfiguration.health = consumerHealth
    realtimeConfiguration.kafkaOptions = configuration.kafkaOptions
    realtimeConfiguration.clock = configuration.clock
    // The embedded broker starts empty: what the store kept of the topic is an earlier broker's.
    if embedded { realtimeConfiguration.earlierBrokerOffsets = EarlierBrokerOffsets(topic: configuration.topic) }
    // The embedded broker holds an empty fetch for the whole wait even when events arrive.
    if embedded { realtimeConfiguration.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds }
    let realtime = try RealtimeStart(configuration: realtimeConfiguration, logger: logger).service()

    var archiveConfiguration = ArchiverConfiguration(bootstrapServers: bootstrapServers, topic: configuration.topic,
                                                     logRoot: configuration.logDirectory)
    archiveConfiguration.allowedLateness = configuration.allowedLateness
    archiveConfiguration.clock = configuration.clock
    archiveConfiguration.consumer.options = configuration.kafkaOptions
    archiveConfiguration.consumer.healthReport = KafkaHealthReport(health: health, component: "archiver Kafka connection")
    if embedded { archiveConfiguration.consumer.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds }
    let archiveSettings = archiveConfiguration
    let archivers = try ComponentSupply { try Archiver(configuration: archiveSettings, logger: logger) }

    var readerConfiguration = configuration.reader
    readerConfiguration.store = store
    readerConfiguration.clock = configuration.clock
    let consumers = realtime.consumers
    readerConfiguration.liveStatus = {
        guard let consumer = consumers.current, let archiver = archivers.current else { return nil }
        return LiveStatus(realtime: consumer.status(), archive: archiver.status())
    }
    readerConfiguration.health = health
    let server = try ReaderServer(configuration: readerConfiguration, logger: logger)

    // Started in this order, stopped in the reverse one: the reader and the producer first,
    // then the scheduled batch, the archiver and the consumer, each after the one before.
    var services = [
        realtime.service,
        archivers.service(health.handle(for: "archiver"), logger: logger),
        ComponentService(batch.health, component: batch, logger: logger),
    ]
    if configuration.demoRate > 0 {
        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        producerConfiguration.clientID = "counterpoint-demo"
        producerConfiguration.options = configuration.kafkaOptions
        producerConfiguration.healthReport = KafkaHealthReport(health: health, component: "demo traffic Kafka connection")
        // At demo rates only long batches stay few: the embedded broker's fetches slow down
        // with every batch it holds (see KafkaMockCluster).
        producerConfiguration.lingerMilliseconds = 200
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        var generator = DemoTraffic.defaultGenerator
        generator.clock = configuration.clock
        let traffic = DemoTraffic(producer: producer, topic: configuration.topic, rate: configuration.demoRate,
                                  generator: generator, logger: logger)
        services.append(ComponentService(health.handle(for: "demo traffic"), component: traffic, logger: logger))
    }
    let port = server.port
    // Announced last, once every other component has started, inside the group.
    services.append(ComponentService(health.handle(for: "reader"), component: server, logger: logger) { onListening?(port) })
    return (services, port)
}

/// Claims `directory` for this run, or says which run holds it.
private func claimDataDirectory(_ directory: String) throws -> DirectoryLock {
    do {
        return try DirectoryLock(directory: directory, name: "run.lock")
    } catch DirectoryLockError.held {
        throw RunError.dataDirectoryInUse(directory)
    }
}

public enum RunError: Error, CustomStringConvertible {
    /// Another `run` on its embedded broker uses the data directory.
    case dataDirectoryInUse(String)

    public var description: String {
        switch self {
        case .dataDirectoryInUse(let directory):
            "another counterpoint run on its embedded broker is using the data directory \(directory) (its realtime offsets are that broker's); stop it, or give this run a --data-dir of its own"
        }
    }
}
