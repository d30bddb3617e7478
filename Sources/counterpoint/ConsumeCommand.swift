import ArgumentParser
import CounterStore
import CounterpointApp
import Foundation
import Realtime

struct ConsumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consume",
        abstract: "The realtime layer: count events from Kafka into the realtime store.",
        discussion: """
        Joins the consumer group on the topic, counts every signal (plays, downloads, likes, \
        reposts, comments; an unlike, unrepost or deleted comment takes one back) per track, per \
        creator an event names and per UTC hour in memory, and flushes the counts and each \
        partition's next offset in one transaction every --flush-interval-ms. On assignment every \
        partition resumes at the offset stored with the counts, so a restart after a crash neither \
        loses nor double-counts an event. A flush the \
        store refuses (a full disk) is retried, re-reading from the stored offsets. Runs until \
        SIGINT/SIGTERM, then flushes and exits 0.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var kafka: KafkaFlags
    @OptionGroup var realtime: RealtimeFlags

    @Option(help: "Kafka bootstrap servers, HOST:PORT[,HOST:PORT…] (env COUNTERPOINT_BROKERS).")
    var brokers: String?

    /// The flag, else the environment (an optional flag cannot take its default from it).
    private var resolvedBrokers: String {
        (brokers ?? Environment.optionalString("brokers") ?? "").trimmingCharacters(in: .whitespaces)
    }

    @Option(help: "Topic of the events, plays and the other signals (env COUNTERPOINT_TOPIC).")
    var topic: String = Environment.string("topic", default: "plays")

    @Option(help: "Consumer group (env COUNTERPOINT_GROUP).")
    var group: String = Environment.string("group", default: "counterpoint-realtime")

    func validate() throws {
        guard !resolvedBrokers.isEmpty else {
            throw ValidationError("--brokers is required (HOST:PORT[,HOST:PORT…]), or set COUNTERPOINT_BROKERS")
        }
        guard !topic.isEmpty else { throw ValidationError("--topic must not be empty") }
        guard !group.isEmpty else { throw ValidationError("--group must not be empty") }
    }

    func run() async throws {
        let logger = Bootstrap.logging(level: common.logLevel)
        _ = Bootstrap.metrics()
        var configuration = RealtimeConfiguration(bootstrapServers: resolvedBrokers,
                                                  store: try storeOptions.backend(dataDirectory: common.dataDirectory))
        configuration.topic = topic
        configuration.group = group
        realtime.apply(to: &configuration)
        configuration.kafkaOptions = try kafka.clientOptions()

        let announcement = "counterpoint: consuming \(topic) from \(resolvedBrokers) as group \(group)"
        let application: Application
        do {
            application = try await buildConsume(configuration, logger: logger) {
                print(announcement)
                fflush(nil)
            }
        } catch {
            throw CommandFailure("consume: \(error)")
        }
        do {
            try await application.runUntilSignalled()
        } catch {
            throw CommandFailure("consume: \(error)")
        }
    }
}
