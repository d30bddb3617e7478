import ArgumentParser
import CounterpointApp
import Foundation
import Kafka

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "All-in-one on one machine: consumer, archiver, reader and scheduled batch in one process.",
        discussion: """
        Without --brokers it starts an embedded Kafka-protocol broker (librdkafka's mock cluster) on \
        loopback with the topic, so it runs with nothing else installed; real clients (kcat, \
        kafka-python) can produce to the address it prints. It starts empty each time, so the \
        topic's offsets an earlier run stored are forgotten at start (the counts stay), and a second run \
        on the same --data-dir is refused while one runs. The realtime \
        consumer counts into <data-dir>/realtime.sqlite, the archiver files every event under <logs>, the batch layer \
        covers the closed hours of <logs> that are new or changed on a schedule, realtime rows of \
        covered hours are compacted away, and the reader answers on --listen — from the start: \
        the other components start once a first batch run has covered what the logs hold (and \
        the demo history is written), and until then /readyz answers 503 saying what run waits for.

        --demo also generates 48 hours of history (rebuilt by the batch layer at start; hours that \
        hold logs already, such as an earlier run's plays, are kept as they are) and produces \
        live synthetic traffic, both at --demo-rate, so the dashboard shows both layers at once and its \
        first chart looks like a real day running into the current hour. SIGINT/SIGTERM stops \
        intake, flushes, commits and exits 0.

        --kafka-option and --kafka-config apply to every Kafka client of the process, on the embedded \
        broker too, which speaks plaintext only: security settings are for --brokers.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var reader: ReaderOptions
    @OptionGroup var kafka: KafkaFlags
    @OptionGroup var realtime: RealtimeFlags

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

    @Option(help: ArgumentHelp(
        "Faults to inject into the embedded broker (which then runs three brokers), e.g. `drill` or 5:down:2:5,15:leaders,20:errors:fetch:20,repeat:60 (env COUNTERPOINT_EMBEDDED_FAULTS).",
        discussion: "Comma-separated SECONDS:FAULT steps, SECONDS after the start: down:BROKER|all:SECONDS, leaders, coordinator:BROKER, errors:REQUEST:COUNT, slow:REQUEST:COUNT:MS; repeat:SECONDS starts over. REQUEST: fetch, offset-commit, heartbeat, join-group, sync-group, produce, metadata, offset-fetch, find-coordinator, list-offsets. `drill` is a minute of every kind, repeated. See docs/faults.md.",
        valueName: "schedule"))
    var embeddedFaults: String?

    /// The flag, else the environment (an optional option cannot take its default from it).
    private var resolvedEmbeddedFaults: String? { embeddedFaults ?? Environment.optionalString("embedded-faults") }

    @Flag(help: "Generate demo history and produce live synthetic traffic (env COUNTERPOINT_DEMO).")
    var demo = Environment.bool("demo")

    @Option(help: "Demo traffic in events per second, live and in the generated history (env COUNTERPOINT_DEMO_RATE).")
    var demoRate: Double = Environment.double("demo-rate", default: RunConfiguration.defaultDemoRate)

    @Option(help: """
        Events in the generated demo history (env COUNTERPOINT_DEMO_EVENTS); default: 48 hours at --demo-rate, so \
        history and live traffic look alike, at most 1,000,000 (about 200 MB). Refused before anything is written \
        when the log directory's disk cannot hold it.
        """)
    var demoEvents: Int?

    /// The flag, else the environment, else 48 hours at the demo rate.
    private var resolvedDemoEvents: Int {
        demoEvents ?? Environment.integer("demo-events", default: RunConfiguration.demoHistoryEvents(rate: demoRate))
    }

    func validate() throws {
        guard (1...1024).contains(partitions) else { throw ValidationError("--partitions must be between 1 and 1024") }
        guard batchIntervalSeconds >= 1 else { throw ValidationError("--batch-interval-seconds must be at least 1") }
        guard allowedLatenessSeconds >= 0 else { throw ValidationError("--allowed-lateness-seconds must be 0 or more") }
        guard demoRate >= 0 else { throw ValidationError("--demo-rate must be 0 or more") }
        if let embeddedFaults = resolvedEmbeddedFaults {
            guard brokers == nil && Environment.optionalString("brokers") == nil else {
                throw ValidationError("--embedded-faults needs the embedded broker: leave out --brokers")
            }
            do { _ = try KafkaFaultSchedule(parsing: embeddedFaults) } catch { throw ValidationError("--embedded-faults: \(error.message)") }
        }
    }

    func run() async throws {
        let logger = Bootstrap.logging(level: common.logLevel)
        let brokers = brokers ?? Environment.optionalString("brokers")
        var configuration = RunConfiguration(store: try storeOptions.backend(dataDirectory: common.dataDirectory),
                                             dataDirectory: common.dataDirectory,
                                             logDirectory: logs ?? Environment.optionalString("logs"))
        configuration.brokers = brokers
        configuration.topic = topic
        configuration.partitions = partitions
        configuration.flushInterval = .milliseconds(realtime.flushIntervalMs)
        configuration.sessionTimeoutMilliseconds = realtime.sessionTimeoutMs
        configuration.allowedLateness = .seconds(allowedLatenessSeconds)
        configuration.batchInterval = .seconds(batchIntervalSeconds)
        configuration.kafkaOptions = try kafka.clientOptions()
        configuration.embeddedFaults = try resolvedEmbeddedFaults.map { try KafkaFaultSchedule(parsing: $0) }
        if demo {
            let historyEvents = resolvedDemoEvents
            configuration.demoHistoryEvents = historyEvents > 0 ? historyEvents : nil
            configuration.demoRate = demoRate
        }
        configuration.reader = reader.readerConfiguration(store: configuration.store, metricsExposition: Bootstrap.metrics())

        let (host, tls) = (reader.listen.host, configuration.reader.tls != nil)
        let application = try await buildRun(configuration, logger: logger) { port in
            announceReader(host: host, port: port, tls: tls)
            print("counterpoint: dashboard at \(readerURL(host: host, port: port, tls: tls)) — Ctrl-C stops")
            fflush(nil)
        }
        if brokers == nil, let bootstrapServers = application.bootstrapServers {
            print("counterpoint: embedded Kafka broker on \(bootstrapServers), topic \(topic) with \(partitions) partitions")
        }
        do {
            try await application.runUntilSignalled()
        } catch {
            throw CommandFailure("run: \(error)")
        }
        logger.info("stopped")
    }
}
