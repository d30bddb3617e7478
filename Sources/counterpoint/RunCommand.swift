import Archive
import ArgumentParser
import BatchJob
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

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "All-in-one on one machine: consumer, archiver, reader and scheduled batch in one process.",
        discussion: """
        Without --brokers it starts an embedded Kafka-protocol broker (librdkafka's mock cluster) on \
        loopback with the topic, so it runs with nothing else installed; real clients (kcat, \
        kafka-python) can produce to the address it prints. The realtime consumer counts into \
        <data-dir>/realtime.sqlite, the archiver files every event under <logs>, the batch layer \
        covers the closed hours of <logs> that are new or changed on a schedule, realtime rows of \
        covered hours are compacted away, and the reader answers on --listen.

        --demo also generates 48 hours of history (rebuilt by the batch layer at start) and produces \
        live synthetic traffic, so the dashboard shows both layers at once. SIGINT/SIGTERM stops \
        intake, flushes, commits and exits 0.

        --kafka-option and --kafka-config apply to every Kafka client of the process, on the embedded         broker too, which speaks plaintext only: security settings are for --brokers.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var reader: ReaderOptions
    @OptionGroup var kafka: KafkaFlags

    @Option(help: "Kafka bootstrap servers, HOST:PORT[,…]; without it an embedded broker runs (env COUNTERPOINT_BROKERS).")
    var brokers: String?

    @Option(help: "Kafka topic (env COUNTERPOINT_TOPIC).")
    var topic: String = Environment.string("topic", default: "plays")

    @Option(help: "Partitions of the topic on the embedded broker (env COUNTERPOINT_PARTITIONS).")
    var partitions: Int = Environment.integer("partitions", default: 16)

    @Option(help: "Event-log directory the archiver writes and the batch reads (default: <data-dir>/logs) (env COUNTERPOINT_LOGS).")
    var logs: String?

    @Option(help: "Seconds between scheduled batch runs over the closed hours (env COUNTERPOINT_BATCH_INTERVAL_SECONDS).")
    var batchIntervalSeconds: Int = Environment.integer("batch-interval-seconds", default: 300)

    @Option(help: "Seconds an hour stays open for late events before the archiver closes it (env COUNTERPOINT_ALLOWED_LATENESS_SECONDS).")
    var allowedLatenessSeconds: Int = Environment.integer("allowed-lateness-seconds", default: 600)

    @Option(help: "Realtime flush interval in milliseconds (env COUNTERPOINT_FLUSH_INTERVAL_MS).")
    var flushIntervalMs: Int = Environment.integer("flush-interval-ms", default: 250)

    @Flag(help: "Generate demo history and produce live synthetic traffic (env COUNTERPOINT_DEMO).")
    var demo = Environment.bool("demo")

    @Option(help: "Live demo traffic in events per second (env COUNTERPOINT_DEMO_RATE).")
    var demoRate: Double = Environment.double("demo-rate", default: 1_000)

    @Option(help: "Events in the generated demo history (env COUNTERPOINT_DEMO_EVENTS).")
    var demoEvents: Int = Environment.integer("demo-events", default: 500_000)

    func validate() throws {
        guard (1...1024).contains(partitions) else { throw ValidationError("--partitions must be between 1 and 1024") }
        guard batchIntervalSeconds >= 1 else { throw ValidationError("--batch-interval-seconds must be at least 1") }
        guard allowedLatenessSeconds >= 0 else { throw ValidationError("--allowed-lateness-seconds must be 0 or more") }
        guard (10...60_000).contains(flushIntervalMs) else { throw ValidationError("--flush-interval-ms must be between 10 and 60000") }
        guard demoRate >= 0 else { throw ValidationError("--demo-rate must be 0 or more") }
    }

    func run() async throws {
        let logger = Bootstrap.logging(level: common.logLevel)
        let exposition = Bootstrap.metrics()
        let logDirectory = logs ?? Environment.optionalString("logs")
            ?? (common.dataDirectory as NSString).appendingPathComponent("logs")

        // The broker: the one given, or an embedded one that outlives every client of it.
        var embedded: KafkaMockCluster?
        let bootstrapServers: String
        if let given = brokers ?? Environment.optionalString("brokers") {
            bootstrapServers = given
        } else {
            let (topic, partitions) = (topic, partitions)
            let cluster = try await BlockingThread.run(name: "broker") {
                let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
                try cluster.createTopic(topic, partitions: partitions)
                return cluster
            }
            embedded = cluster
            bootstrapServers = cluster.bootstrapServers
            print("counterpoint: embedded Kafka broker on \(bootstrapServers), topic \(topic) with \(partitions) partitions")
        }
        if demo {
            let command = self
            try await BlockingThread.run(name: "demo-history") { try command.generateHistory(into: logDirectory, logger: logger) }
        }

        // Every client of the broker lives inside this call: when it returns they have stopped
        // (in reverse order of the service list) and been released, so the embedded broker goes
        // last and no client logs a broker that went away.
        var failure: (any Error)?
        do {
            try await runComponents(bootstrapServers: bootstrapServers, embedded: embedded != nil, logDirectory: logDirectory,
                                    exposition: exposition, logger: logger)
        } catch {
            failure = error
        }
        embedded = nil
        if let failure { throw failure }
        logger.info("stopped")
    }

    /// Builds the components, runs them as one `ServiceGroup` until SIGINT/SIGTERM or a failure
    /// they cannot recover from, and returns once all have stopped.
    private func runComponents(bootstrapServers: String, embedded: Bool, logDirectory: String,
                               exposition: @escaping @Sendable () -> String, logger: Logger) async throws {
        // Opening stores and reaching the broker block: off the cooperative pool.
        let command = self
        let services = try await BlockingThread.run(name: "build") {
            try command.buildComponents(bootstrapServers: bootstrapServers, embedded: embedded, logDirectory: logDirectory,
                                        exposition: exposition, logger: logger)
        }
        do {
            try await Bootstrap.runServices(services, logger: logger)
        } catch {
            throw CommandFailure("run: \(error)")
        }
    }

    /// The components of `run`, as services in start order.
    private func buildComponents(bootstrapServers: String, embedded: Bool, logDirectory: String,
                                 exposition: @escaping @Sendable () -> String,
                                 logger: Logger) throws -> [ComponentService] {
        let store = try storeOptions.backend(dataDirectory: common.dataDirectory)
        let health = ComponentHealth(logger: logger)
        let batch = ScheduledBatch(logDirectory: logDirectory, store: store, scratchDirectory: common.dataDirectory,
                                   interval: .seconds(batchIntervalSeconds),
                                   health: health.handle(for: "scheduled batch"), logger: logger)
        batch.runOnce()

        var realtimeConfiguration = RealtimeConfiguration(bootstrapServers: bootstrapServers, store: store)
        realtimeConfiguration.topic = topic
        realtimeConfiguration.flushInterval = .milliseconds(flushIntervalMs)
        let consumerHealth = health.handle(for: "consumer")
        realtimeConfiguration.health = consumerHealth
        let kafkaOptions = try kafka.clientOptions()
        realtimeConfiguration.kafkaOptions = kafkaOptions
        // The embedded broker holds an empty fetch for the whole wait even when events arrive.
        if embedded { realtimeConfiguration.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds }
        let consumer = try RealtimeConsumer(configuration: realtimeConfiguration, logger: logger)

        var archiveConfiguration = ArchiverConfiguration(bootstrapServers: bootstrapServers, topic: topic, logRoot: logDirectory)
        archiveConfiguration.allowedLateness = .seconds(allowedLatenessSeconds)
        archiveConfiguration.consumer.options = kafkaOptions
        archiveConfiguration.consumer.healthReport = KafkaHealthReport(health: health, component: "archiver Kafka connection")
        if embedded { archiveConfiguration.consumer.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds }
        // Made now so that a bad configuration fails at start; after a failure (a full disk) a
        // new one resumes from the last committed offsets.
        let archivers = ArchiverSupply(first: try Archiver(configuration: archiveConfiguration, logger: logger),
                                       configuration: archiveConfiguration, logger: logger)

        var readerConfiguration = reader.readerConfiguration(store: store, metricsExposition: exposition)
        readerConfiguration.liveStatus = { LiveStatus(consumer.status(), archive: archivers.current.status()) }
        readerConfiguration.health = health
        let server = try ReaderServer(configuration: readerConfiguration, logger: logger)

        // Started in this order, stopped in the reverse one: the reader and the producer first,
        // then the scheduled batch, the archiver and the consumer, each after the one before.
        var services = [
            ComponentService(consumerHealth, component: consumer, logger: logger),
            ComponentService(health.handle(for: "archiver"), restart: RestartPolicy(), logger: logger) { try archivers.next() },
            ComponentService(batch.health, component: batch, logger: logger),
        ]
        if demo && demoRate > 0 {
            var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
            producerConfiguration.clientID = "counterpoint-demo"
            producerConfiguration.options = kafkaOptions
            producerConfiguration.healthReport = KafkaHealthReport(health: health, component: "demo traffic Kafka connection")
            // At demo rates only long batches stay few: the embedded broker's fetches slow down
            // with every batch it holds (see KafkaMockCluster).
            producerConfiguration.lingerMilliseconds = 200
            let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
            let traffic = DemoTraffic(producer: producer, topic: topic, rate: demoRate, logger: logger)
            services.append(ComponentService(health.handle(for: "demo traffic"), component: traffic, logger: logger))
        }
        let host = reader.listen.host
        // Announced last, once every other component has started, inside the group.
        services.append(ComponentService(health.handle(for: "reader"), component: server, logger: logger) {
            announce(server, host: host)
            print("counterpoint: dashboard at \(readerAddress(server, host: host)) — Ctrl-C stops")
            fflush(nil)
        })
        return services
    }

    /// 48 hours of closed history ending at the current hour, which the first batch run covers.
    private func generateHistory(into logDirectory: String, logger: Logger) throws {
        var configuration = GeneratorConfiguration()
        configuration.events = demoEvents
        configuration.tracks = 5_000
        configuration.hours = 48
        configuration.start = Hour(epochSeconds: Int64(Date().timeIntervalSince1970)).advanced(by: -48)
        configuration.duplicateRate = 0.01
        configuration.malformedRate = 0.001
        let summary = try Generator.generate(configuration, into: logDirectory)
        logger.info("demo history generated", metadata: [
            "logs.directory": "\(logDirectory)", "logs.events": "\(summary.events)", "logs.files": "\(summary.files)",
        ])
    }
}

/// The archivers of `run` and `archive`: the one made at start, then a new one after each
/// failure (an archiver runs once), each resuming from the group's committed offsets.
final class ArchiverSupply: Sendable {
    private let state: Locked<(current: Archiver, unused: Bool)>
    private let configuration: ArchiverConfiguration
    private let logger: Logger

    init(first: Archiver, configuration: ArchiverConfiguration, logger: Logger) {
        state = Locked((first, true))
        self.configuration = configuration
        self.logger = logger
    }

    /// The archiver running now, or the last one.
    var current: Archiver { state.withLock { $0.current } }

    func next() throws -> Archiver {
        if let first = state.withLock({ state -> Archiver? in
            defer { state.unused = false }
            return state.unused ? state.current : nil
        }) {
            return first
        }
        let fresh = try Archiver(configuration: configuration, logger: logger)
        state.withLock { $0.current = fresh }
        return fresh
    }
}

extension LiveStatus {
    /// What the consumer and the archiver report, in the reader's terms.
    init(_ realtime: RealtimeStatus, archive: ArchiveStatus) {
        self.init(
            eventsPerSecond: realtime.eventsPerSecond, rejections: realtime.rejections,
            offsetGaps: realtime.offsetGaps.map {
                OffsetGapNote(topic: $0.topic, partition: $0.partition, expectedOffset: $0.expectedOffset,
                              resumedOffset: $0.resumedOffset, skippedEvents: $0.skippedEvents, detectedAt: $0.detectedAt)
            },
            fencedFlushes: realtime.fencedFlushes,
            archive: ArchiveNote(openHours: archive.openHours, lastClosedHour: archive.lastClosedHour,
                                 eventsArchived: archive.eventsArchived, lateEvents: archive.lateEvents,
                                 invalidMessages: archive.invalidMessages,
                                 offsetGapSkippedMessages: archive.gapSkippedMessages))
    }
}
