import ArgumentParser
import Foundation
import Kafka
import Logging
import CounterpointApp
import Replay
import Runtime

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Load test: produce the events of log files into Kafka at a target rate, and report how it went.",
        discussion: """
        Every line of the logs (files or directories, plain or gzip, in path order) becomes one \
        message on --topic, keyed by the event's track_id; lines that are not valid events are \
        produced too, without a key, and blank lines are skipped. --rate paces the events against \
        a monotonic clock (0: as fast as the producer takes them; a full producer queue slows the \
        replay down, it never drops). Stops at the end of the logs (unless --loop), after \
        --duration or --limit, or on SIGINT/SIGTERM, always after a final flush (of at most 30 s, \
        5 s after a signal; what is not delivered by then is reported as undelivered). Reports events \
        sent, achieved events/s, delivery errors and delivery latency; --json prints one object.

        The producer batches for throughput: it waits up to --linger-ms (default 50) to fill a \
        batch per partition and compresses batches with lz4 (librdkafka, kcat and Java clients \
        read them; kafka-python needs its lz4 module). Delivery latency includes that wait.
        """)

    @Option(help: "Kafka brokers, HOST:PORT[,HOST:PORT…] (env COUNTERPOINT_BROKERS).")
    var brokers: String = Environment.string("brokers", default: "")

    @OptionGroup var kafka: KafkaFlags

    @Option(help: "A log file or directory; repeat for more (env COUNTERPOINT_LOGS, comma-separated).")
    var logs: [String] = Environment.list("logs")

    @Option(help: "Topic to produce to (env COUNTERPOINT_TOPIC).")
    var topic: String = Environment.string("topic", default: "plays")

    @Option(help: "Target events per second; 0 for as fast as possible (env COUNTERPOINT_RATE).")
    var rate: Double = Environment.double("rate", default: 0)

    @Flag(help: "Start the logs again when they end (env COUNTERPOINT_LOOP).")
    var loop = Environment.bool("loop")

    @Option(help: "Stop after this many seconds (env COUNTERPOINT_DURATION).")
    var duration: Double?

    @Option(help: "Stop after this many events (env COUNTERPOINT_LIMIT).")
    var limit: Int?

    @Option(help: "Milliseconds the producer waits to fill a batch per partition (env COUNTERPOINT_LINGER_MS).")
    var lingerMs: Int = Environment.integer("linger-ms", default: ReplayCommand.defaultLingerMilliseconds)

    @Option(help: "Batch compression: none, gzip, snappy, lz4 or zstd (env COUNTERPOINT_COMPRESSION).")
    var compression: String = Environment.string("compression", default: ReplayCommand.defaultCompression.rawValue)

    @Option(help: "Seconds to wait for a broker to answer before giving up (env COUNTERPOINT_CONNECT_TIMEOUT).")
    var connectTimeout: Double = Environment.double("connect-timeout", default: 10)

    @Option(name: .customLong("log-level"),
            help: "trace, debug, info, notice, warning, error or critical (env COUNTERPOINT_LOG_LEVEL).")
    var logLevel: String = Environment.string("log-level", default: "info")

    @OptionGroup var output: SummaryOutput

    /// `--duration` and `--limit`, falling back to the environment.
    private var durationSeconds: Double? { duration ?? Environment.optionalString("duration").flatMap(Double.init) }
    private var eventLimit: Int? { limit ?? Environment.optionalString("limit").flatMap(Int.init) }

    /// A load generator batches like a busy ingestion service. The embedded broker needs it most:
    /// its fetches slow down with every batch it holds (`KafkaMockCluster`), and lz4 batches
    /// keep about 3.4 times more events within its 5 MiB per partition.
    static let defaultLingerMilliseconds = 50
    static let defaultCompression = KafkaProducerConfiguration.Compression.lz4

    func validate() throws {
        guard !brokers.isEmpty else { throw ValidationError("give the Kafka brokers with --brokers HOST:PORT[,…]") }
        guard !logs.isEmpty else { throw ValidationError("give at least one --logs file or directory") }
        guard !topic.isEmpty else { throw ValidationError("--topic must not be empty") }
        guard rate >= 0, rate.isFinite else { throw ValidationError("--rate must be 0 or more events per second") }
        if let duration = durationSeconds { guard duration > 0, duration.isFinite else { throw ValidationError("--duration must be a positive number of seconds") } }
        if let limit = eventLimit { guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") } }
        guard (0...60_000).contains(lingerMs) else { throw ValidationError("--linger-ms must be between 0 and 60000") }
        guard KafkaProducerConfiguration.Compression(rawValue: compression) != nil else {
            throw ValidationError("--compression must be one of none, gzip, snappy, lz4, zstd")
        }
        guard connectTimeout > 0, connectTimeout.isFinite else { throw ValidationError("--connect-timeout must be a positive number of seconds") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        let logger = Bootstrap.logging(level: logLevel)
        let source: ReplaySource
        do {
            let logs = self.logs
            source = try await BlockingThread.run(name: "open") { try ReplaySource.logs(at: logs) }
        } catch {
            throw CommandFailure("replay: \(error)")
        }

        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: brokers)
        producerConfiguration.clientID = "counterpoint-replay"
        producerConfiguration.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
        producerConfiguration.lingerMilliseconds = lingerMs
        producerConfiguration.compression = KafkaProducerConfiguration.Compression(rawValue: compression) ?? .none
        producerConfiguration.options = try kafka.clientOptions()
        var configuration = ReplayConfiguration(topic: topic)
        configuration.rate = rate
        configuration.loop = loop
        configuration.duration = durationSeconds.map { .milliseconds(Int64($0 * 1000)) }
        configuration.limit = eventLimit
        let progress = output.progressLine()
        let replay: ReplayRun
        do {
            replay = try await buildReplay(source: source, producer: producerConfiguration, configuration: configuration,
                                           logger: logger) { step in
                progress.update("replay: \(step.events.formatted()) events, " +
                                "\(Int(step.eventsPerSecond.rounded()).formatted()) events/s, " +
                                "\(step.delivered.formatted()) delivered, \(step.failed.formatted()) failed")
            }
        } catch let error as KafkaError {
            throw CommandFailure("replay: \(error.message) (\(error.name))")
        }
        // SIGINT/SIGTERM stops the replay early, after its final (shorter) flush; it ends by itself at
        // --duration or --limit, which ends the application.
        let summary: ReplaySummary
        do {
            try await replay.application.runUntilSignalled()
            summary = try await replay.outcome.result.get()
        } catch {
            progress.finish()
            throw CommandFailure("replay failed: \((error as? ComponentFailure)?.underlying ?? error)")
        }
        progress.finish()
        try output.print(summary.jsonObject, text: summary.text)
        if summary.failed > 0 || summary.undelivered > 0 {
            throw CommandFailure("replay: \(summary.failed + summary.undelivered) of \(summary.events) events were not delivered")
        }
    }
}
