import Archive
import ArgumentParser
import Foundation
import Kafka
import Logging
import Runtime

struct ArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "archive",
        abstract: "Write every event of a Kafka topic, as received, into hourly event-log files for batch.",
        discussion: """
        Events go to <logs>/<YYYY-MM-DD>/<HH>.p<partition>.ndjson of their occurred_at hour. An hour \
        closes (<HH>.closed) once the stream has passed its end plus the allowed lateness; events \
        arriving for a closed hour go to <HH>.late.p<partition>.ndjson, which batch reads with the hour.

        Files are fsynced before offsets are committed to the consumer group, so a crash repeats \
        events (batch de-duplicates them) and loses none. Messages that are not valid events are \
        written to the hour of their Kafka timestamp, where batch counts them as rejected. A file \
        that cannot be written (a full disk) stops commits; the archiver then starts again after a \
        growing delay, from the last commit. Runs until SIGINT/SIGTERM, then syncs, commits and exits 0.
        """)

    @Option(help: "Kafka bootstrap servers, HOST:PORT[,HOST:PORT…] (env COUNTERPOINT_BROKERS).")
    var brokers: String = Environment.string("brokers", default: "")

    @OptionGroup var kafka: KafkaFlags

    @Option(help: "Topic to archive (env COUNTERPOINT_TOPIC).")
    var topic: String = Environment.string("topic", default: "plays")

    @Option(help: "Consumer group; its committed offsets are the archiver's progress (env COUNTERPOINT_GROUP).")
    var group: String = Environment.string("group", default: ArchiverConfiguration.defaultGroupID)

    @Option(help: "Root directory of the event logs written (env COUNTERPOINT_LOGS).")
    var logs: String = Environment.string("logs", default: "./logs")

    @Option(help: "How long after an hour's end its events are still awaited before it closes, in seconds (env COUNTERPOINT_ALLOWED_LATENESS_SECONDS).")
    var allowedLatenessSeconds: Int = Environment.integer("allowed-lateness-seconds", default: 600)

    @Option(help: "How often files are fsynced and offsets committed, in milliseconds (env COUNTERPOINT_COMMIT_INTERVAL_MS).")
    var commitIntervalMs: Int = Environment.integer("commit-interval-ms", default: 1_000)

    @Option(name: .customLong("log-level"),
            help: "trace, debug, info, notice, warning, error or critical (env COUNTERPOINT_LOG_LEVEL).")
    var logLevel: String = Environment.string("log-level", default: "info")

    func validate() throws {
        guard !brokers.isEmpty else { throw ValidationError("give the Kafka brokers with --brokers HOST:PORT[,…]") }
        guard !topic.isEmpty else { throw ValidationError("--topic must not be empty") }
        guard !group.isEmpty else { throw ValidationError("--group must not be empty") }
        guard !logs.isEmpty else { throw ValidationError("--logs must not be empty") }
        guard allowedLatenessSeconds >= 0 else { throw ValidationError("--allowed-lateness-seconds must not be negative") }
        guard commitIntervalMs >= 1 else { throw ValidationError("--commit-interval-ms must be at least 1") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        let logger = Bootstrap.logging(level: logLevel)
        _ = Bootstrap.metrics()
        let health = ComponentHealth(logger: logger)
        var configuration = ArchiverConfiguration(bootstrapServers: brokers, topic: topic, groupID: group, logRoot: logs)
        configuration.allowedLateness = .seconds(allowedLatenessSeconds)
        configuration.commitInterval = .milliseconds(commitIntervalMs)
        configuration.consumer.options = try kafka.clientOptions()
        configuration.consumer.healthReport = KafkaHealthReport(health: health, component: "archiver Kafka connection")
        let archivers: ArchiverSupply
        do {
            let configuration = configuration
            let first = try await BlockingThread.run(name: "connect") { try Archiver(configuration: configuration, logger: logger) }
            archivers = ArchiverSupply(first: first, configuration: configuration, logger: logger)
        } catch {
            throw CommandFailure("archive: cannot start: \(error)")
        }
        do {
            try await Bootstrap.runServices([
                ComponentService(health.handle(for: "archiver"), restart: RestartPolicy(), logger: logger) { try archivers.next() },
            ], logger: logger)
        } catch {
            throw CommandFailure("archive failed: \(error)")
        }
        let status = archivers.current.status()
        logger.info("archive stopped", metadata: [
            "archive.events": "\(status.eventsArchived)", "archive.late_events": "\(status.lateEvents)",
            "archive.invalid_messages": "\(status.invalidMessages)", "archive.closed_hours": "\(status.closedHours)",
        ])
    }
}
