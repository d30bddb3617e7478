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
import ServiceLifecycle

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "All-in-one on one machine: consumer, archiver, reader and scheduled batch in one process.",
        discussion: """
        Without --brokers it starts an embedded Kafka-protocol broker (librdkafka's mock cluster) on \
        loopback with the topic, so it runs with nothing else installed; real clients (kcat, \
        kafka-python) can produce to the address it prints. The realtime consumer counts into \
        <data-dir>/realtime.sqlite, the archiver files every event under <logs>, the batch layer \
        rebuilds every closed hour of <logs> on a schedule, and the reader answers on --listen.

        --demo also generates 48 hours of history (rebuilt by the batch layer at start) and produces \
        live synthetic traffic, so the dashboard shows both layers at once. SIGINT/SIGTERM stops \
        intake, flushes, commits and exits 0.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var reader: ReaderOptions

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
        let location = StoreLocation(directory: common.dataDirectory)
        let logDirectory = logs ?? Environment.optionalString("logs")
            ?? (common.dataDirectory as NSString).appendingPathComponent("logs")

        // The broker: the one given, or an embedded one that lives as long as the process.
        var embedded: KafkaMockCluster?
        let bootstrapServers: String
        if let given = brokers ?? Environment.optionalString("brokers") {
            bootstrapServers = given
        } else {
            let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
            try cluster.createTopic(topic, partitions: partitions)
            embedded = cluster
            bootstrapServers = cluster.bootstrapServers
            print("counterpoint: embedded Kafka broker on \(bootstrapServers), topic \(topic) with \(partitions) partitions")
        }

        if demo { try generateHistory(into: logDirectory, logger: logger) }
        let batchRunner = ScheduledBatch(logDirectory: logDirectory, location: location, logger: logger)
        batchRunner.runOnce()

        var realtimeConfiguration = RealtimeConfiguration(bootstrapServers: bootstrapServers, location: location)
        realtimeConfiguration.topic = topic
        realtimeConfiguration.flushInterval = .milliseconds(flushIntervalMs)
        // The embedded broker holds an empty fetch for the whole wait even when events arrive.
        if embedded != nil { realtimeConfiguration.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds }
        let consumer = try RealtimeConsumer(configuration: realtimeConfiguration, logger: logger)

        var archiveConfiguration = ArchiverConfiguration(bootstrapServers: bootstrapServers, topic: topic, logRoot: logDirectory)
        archiveConfiguration.allowedLateness = .seconds(allowedLatenessSeconds)
        if embedded != nil { archiveConfiguration.consumer.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds }
        let archiver = try Archiver(configuration: archiveConfiguration, logger: logger)

        var readerConfiguration = reader.readerConfiguration(location: location, metricsExposition: exposition)
        readerConfiguration.liveStatus = { LiveStatus(consumer.status(), archive: archiver.status()) }
        let server = try ReaderServer(configuration: readerConfiguration, logger: logger)

        var services: [ComponentService] = [
            ComponentService("consumer", start: { try consumer.start() }, stop: { try consumer.stop() },
                             failure: { consumer.failure }),
            ComponentService("archiver", start: { try archiver.start() }, stop: { try archiver.stop() }),
            ComponentService("reader", start: {}, stop: { server.stop() }),
        ]
        let schedule = PeriodicTask(every: .seconds(batchIntervalSeconds)) { batchRunner.runOnce() }
        services.append(ComponentService("scheduled batch", start: { schedule.start() }, stop: { schedule.stop() }))
        if demo && demoRate > 0 {
            var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
            producerConfiguration.clientID = "counterpoint-demo"
            // At demo rates only long batches stay few: the embedded broker's fetches slow down
            // with every batch it holds (see KafkaMockCluster).
            producerConfiguration.lingerMilliseconds = 200
            let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
            let traffic = DemoTraffic(producer: producer, topic: topic, rate: demoRate, logger: logger)
            services.append(ComponentService("demo traffic", start: { traffic.start() }, stop: { _ = traffic.stop() }))
        }

        announce(server, host: reader.listen.host)
        print("counterpoint: dashboard at http://\(reader.listen.host):\(server.port)/ — Ctrl-C stops")
        fflush(nil)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0, serviceName: $0.description) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        withExtendedLifetime(embedded) {}
        logger.info("stopped")
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

/// The batch layer on a schedule: each run rebuilds every closed hour of the log directory.
/// A run with nothing closed yet does nothing; a failed run is logged and changes nothing.
struct ScheduledBatch: Sendable {
    let logDirectory: String
    let location: StoreLocation
    let logger: Logger

    func runOnce() {
        guard FileManager.default.fileExists(atPath: logDirectory) else { return }
        do {
            let summary = try BatchJob.run(BatchConfiguration(logPaths: [logDirectory], location: location), logger: logger)
            logger.info("scheduled batch finished", metadata: [
                "batch.hours": "\(summary.hours)", "batch.counted": "\(summary.counted)",
                "batch.seconds": "\(summary.seconds)",
            ])
        } catch BatchError.noClosedHours {
            logger.debug("scheduled batch: no closed hours yet")
        } catch {
            logger.warning("scheduled batch failed; the batch store is unchanged", metadata: ["error": "\(error)"])
        }
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
