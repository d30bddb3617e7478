import Archive
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Generator
import Kafka
import Logging
import Reader
import Realtime
import Replay
import Runtime

/// Everything `counterpoint run` needs: the whole service on one machine.
public struct RunConfiguration: Sendable {
    /// The stores every component uses (the reader's included).
    public var store: StoreBackend
    /// Scratch space of the scheduled batch, beside the stores.
    public var dataDirectory: String
    /// The event logs the archiver writes and the scheduled batch reads.
    public var logDirectory: String
    /// Kafka bootstrap servers, HOST:PORT[,…]; nil starts an embedded broker (librdkafka's mock
    /// cluster) on loopback, with `topic` in `partitions` partitions.
    public var brokers: String?
    public var topic = "plays"
    /// librdkafka properties for every Kafka client of the process (`--kafka-option`,
    /// `--kafka-config`), the embedded broker's included.
    public var kafkaOptions = KafkaClientOptions()
    /// Partitions of the topic on the embedded broker.
    public var partitions = 16
    /// Faults to inject into the embedded broker, which then runs three brokers so that one can
    /// fail while the others serve (docs/faults.md); nil for none. Needs `brokers` nil.
    public var embeddedFaults: KafkaFaultSchedule?
    /// How often the realtime layer flushes counts and offsets.
    public var flushInterval: Duration = .milliseconds(250)
    /// How long the realtime consumer's group waits for a silent member before handing its
    /// partitions on.
    public var sessionTimeoutMilliseconds = 10_000
    /// How long an hour stays open for late events before the archiver closes it.
    public var allowedLateness: Duration = .seconds(600)
    /// How often the scheduled batch covers the closed hours that are new or changed.
    public var batchInterval: Duration = .seconds(300)
    /// Events of closed history (48 hours ending now) generated into `logDirectory` before
    /// anything starts, which the first batch run covers; nil for none.
    public var demoHistoryEvents: Int?
    /// Live synthetic plays produced per second; 0 for none.
    public var demoRate: Double = 0
    /// "Now", for every component of the run: the demo's history ends at its current hour, and
    /// the reader, consumer, archiver and scheduled batch take their times from it.
    public var clock = WallClock.system

    /// The demo's rate when none is given: its history at this rate (`demoHistoryEvents(rate:)`)
    /// is generated and covered by the first batch run in a few seconds.
    public static let defaultDemoRate = 5.0

    /// The events of 48 hours of demo history at `rate` events per second: history and live
    /// traffic at one rate, so that the first chart shows a day's rhythm running into the
    /// current hour, not a wall of near-zero hours beside one spike — but never more than
    /// `maximumDemoHistoryEvents`, whatever the rate.
    public static func demoHistoryEvents(rate: Double) -> Int {
        min(maximumDemoHistoryEvents, Int((rate * 3_600 * Double(demoHistoryHours)).rounded()))
    }

    /// What a person looking at the demo can take in, generated and covered by the first batch
    /// run in seconds, in about 200 MB of logs: a busier live rate (`--demo-rate 20000` would
    /// otherwise ask for 3.5 billion events, 700 GB) makes the last hours look busier, not
    /// the history longer. `--demo-events` may ask for more; the disk's free space still bounds it.
    public static let maximumDemoHistoryEvents = 1_000_000

    static let demoHistoryHours = 48
    /// The reader's listen address, threads, snapshot age and metrics exposition. Its store,
    /// live status and health are the run's own: `store`, the consumer's and archiver's
    /// status, and the application's `health`.
    public var reader: ReaderConfiguration

    /// The stores `store`, with the event logs in `<dataDirectory>/logs` unless told otherwise.
    public init(store: StoreBackend, dataDirectory: String, logDirectory: String? = nil) {
        self.store = store
        self.dataDirectory = dataDirectory
        self.logDirectory = logDirectory ?? (dataDirectory as NSString).appendingPathComponent("logs")
        self.reader = ReaderConfiguration(store: store)
    }
}

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

/// 48 hours of closed history ending at the current hour, which the first batch run covers.
/// Hours that hold logs already (an earlier run's history, or the plays its archiver filed) are
/// left as they are, so a second run neither adds history on top of real plays nor makes the
/// batch layer rebuild hours that did not change.
private func generateDemoHistory(events: Int, into logDirectory: String, clock: WallClock, logger: Logger) throws {
    var configuration = GeneratorConfiguration()
    configuration.events = events
    configuration.tracks = 5_000
    configuration.hours = RunConfiguration.demoHistoryHours
    configuration.clock = clock
    configuration.duplicateRate = 0.01
    configuration.malformedRate = 0.001
    if FileManager.default.fileExists(atPath: logDirectory) {
        let inventory = try LogDiscovery.inventory(of: [logDirectory])
        configuration.keptHours = Set(inventory.files.compactMap(\.hour) + inventory.closedHours)
    }
    let hoursToWrite = RunConfiguration.demoHistoryHours - configuration.keptHours.count
    logger.info("generating demo history", metadata: [
        "logs.directory": "\(logDirectory)", "logs.events": "\(events)", "logs.hours": "\(hoursToWrite)",
        "logs.estimated_mb": "\(configuration.estimatedBytes / 1_000_000)",
    ])
    let progress = LogThrottle(every: .seconds(2))
    let summary = try Generator.generate(configuration, into: logDirectory) { written in
        guard progress.admit() != nil, written < events else { return }
        logger.info("generating demo history: \(written * 100 / max(1, events)) % (\(written) of \(events) events)")
    }
    logger.info("demo history generated", metadata: [
        "logs.directory": "\(logDirectory)", "logs.events": "\(summary.events)", "logs.files": "\(summary.files)",
        "logs.hours_kept": "\(RunConfiguration.demoHistoryHours - summary.files)",
    ])
}
