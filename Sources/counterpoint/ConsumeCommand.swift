import ArgumentParser
import CounterStore
import Foundation
import Realtime
import Runtime

struct ConsumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consume",
        abstract: "The realtime layer: count plays from Kafka into the realtime store.",
        discussion: """
        Joins the consumer group on the topic, counts plays per track and UTC hour in memory and \
        flushes the counts and each partition's next offset in one transaction every \
        --flush-interval-ms. On assignment every partition resumes at the offset stored with the \
        counts, so a restart after a crash neither loses nor double-counts a play. A flush the \
        store refuses (a full disk) is retried, re-reading from the stored offsets. Runs until \
        SIGINT/SIGTERM, then flushes and exits 0.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var kafka: KafkaFlags

    @Option(help: "Kafka bootstrap servers, HOST:PORT[,HOST:PORT…] (env COUNTERPOINT_BROKERS).")
    var brokers: String?

    /// The flag, else the environment (an optional flag cannot take its default from it).
    private var resolvedBrokers: String {
        (brokers ?? Environment.optionalString("brokers") ?? "").trimmingCharacters(in: .whitespaces)
    }

    @Option(help: "Topic of play events (env COUNTERPOINT_TOPIC).")
    var topic: String = Environment.string("topic", default: "plays")

    @Option(help: "Consumer group (env COUNTERPOINT_GROUP).")
    var group: String = Environment.string("group", default: "counterpoint-realtime")

    @Option(help: "Milliseconds between flushes of counts and offsets (env COUNTERPOINT_FLUSH_INTERVAL_MS).")
    var flushIntervalMs: Int = Environment.integer("flush-interval-ms", default: 250)

    @Option(help: "Milliseconds after which the group drops a silent member, e.g. a killed process, and gives its partitions to the others (env COUNTERPOINT_SESSION_TIMEOUT_MS).")
    var sessionTimeoutMs: Int = Environment.integer("session-timeout-ms", default: 10_000)

    func validate() throws {
        guard !resolvedBrokers.isEmpty else {
            throw ValidationError("--brokers is required (HOST:PORT[,HOST:PORT…]), or set COUNTERPOINT_BROKERS")
        }
        guard !topic.isEmpty else { throw ValidationError("--topic must not be empty") }
        guard !group.isEmpty else { throw ValidationError("--group must not be empty") }
        guard (1...3_600_000).contains(flushIntervalMs) else {
            throw ValidationError("--flush-interval-ms must be between 1 and 3600000")
        }
        guard (1_000...3_600_000).contains(sessionTimeoutMs) else {
            throw ValidationError("--session-timeout-ms must be between 1000 and 3600000")
        }
    }

    func run() async throws {
        let logger = Bootstrap.logging(level: common.logLevel)
        _ = Bootstrap.metrics()
        let health = ComponentHealth(logger: logger)
        var configuration = RealtimeConfiguration(bootstrapServers: resolvedBrokers,
                                                  store: try storeOptions.backend(dataDirectory: common.dataDirectory))
        configuration.topic = topic
        configuration.group = group
        configuration.flushInterval = .milliseconds(flushIntervalMs)
        configuration.sessionTimeoutMilliseconds = sessionTimeoutMs
        // Three heartbeats per session timeout, as Kafka recommends, and no slower than its default.
        configuration.heartbeatIntervalMilliseconds = min(3_000, sessionTimeoutMs / 3)
        let consumerHealth = health.handle(for: "consumer")
        configuration.health = consumerHealth
        configuration.kafkaOptions = try kafka.clientOptions()

        let consumer: RealtimeConsumer
        do {
            let configuration = configuration
            consumer = try await BlockingThread.run(name: "connect") { try RealtimeConsumer(configuration: configuration, logger: logger) }
        } catch {
            throw CommandFailure("consume: \(error)")
        }
        let announcement = "counterpoint: consuming \(topic) from \(resolvedBrokers) as group \(group)"
        do {
            try await Bootstrap.runServices([
                ComponentService(consumerHealth, component: consumer, logger: logger) {
                    print(announcement)
                    fflush(nil)
                },
            ], logger: logger)
        } catch {
            throw CommandFailure("consume: \(error)")
        }
    }
}
