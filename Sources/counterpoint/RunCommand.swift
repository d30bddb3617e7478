import ArgumentParser
import BatchJob
import CounterpointCore
import CounterStore
import Foundation
import Generator
import Logging
import Reader

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "All-in-one on one machine: demo logs, a batch rebuild, and the reader.",
        discussion: """
        Today `run` is the batch layer and the reader in one process: with --demo (or when --logs
        holds no logs yet) it generates demo event logs, rebuilds their closed hours into the batch
        store, and serves them, printing the dashboard's address. The realtime layer (Kafka
        consumer, archiver, embedded broker) joins it in the next release.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var reader: ReaderOptions

    @Option(help: "Event-log directory to rebuild from (default: <data-dir>/logs) (env COUNTERPOINT_LOGS).")
    var logs: String?

    @Flag(help: "Generate demo logs first (env COUNTERPOINT_DEMO).")
    var demo = Environment.bool("demo")

    @Option(help: "Events in the demo logs (env COUNTERPOINT_DEMO_EVENTS).")
    var demoEvents: Int = Environment.integer("demo-events", default: 500_000)

    func run() throws {
        Bootstrap.blockTerminationSignals()
        let logger = Bootstrap.logging(level: common.logLevel)
        let exposition = Bootstrap.metrics()
        let location = StoreLocation(directory: common.dataDirectory)
        let logDirectory = logs ?? Environment.optionalString("logs") ?? (common.dataDirectory as NSString).appendingPathComponent("logs")

        if demo || !FileManager.default.fileExists(atPath: logDirectory) {
            var configuration = GeneratorConfiguration()
            configuration.events = demoEvents
            configuration.tracks = 5_000
            configuration.hours = 48
            configuration.start = Hour(epochSeconds: Int64(Date().timeIntervalSince1970)).advanced(by: -48)
            configuration.duplicateRate = 0.01
            configuration.malformedRate = 0.001
            let summary = try Generator.generate(configuration, into: logDirectory)
            logger.info("demo logs generated", metadata: [
                "logs.directory": "\(logDirectory)", "logs.events": "\(summary.events)", "logs.files": "\(summary.files)",
            ])
        }

        let summary = try BatchJob.run(BatchConfiguration(logPaths: [logDirectory], location: location), logger: logger)
        print(summary.text)

        let server = try ReaderServer(
            configuration: reader.readerConfiguration(location: location, metricsExposition: exposition),
            logger: logger)
        announce(server, host: reader.listen.host)
        print("counterpoint: dashboard at http://\(reader.listen.host):\(server.port)/ — Ctrl-C stops")
        fflush(nil)
        Bootstrap.waitForTermination()
        server.stop()
    }
}
