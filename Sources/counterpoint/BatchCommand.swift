import ArgumentParser
import BatchJob
import CounterpointApp
import CounterpointCore
import CounterStore
import Foundation

struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Recompute authoritative counts from event logs and replace the covered hours atomically.",
        discussion: """
        Reads log files or directories (plain or gzip NDJSON), validates every event, de-duplicates \
        by event_id within each UTC hour, and replaces the counts of the chosen hours in \
        <data-dir>/batch.sqlite in one transaction: readers see the old counts or the new ones, \
        never a mix. Safe to re-run at any time; the same logs give identical rows.

        Hours: --from/--to (RFC 3339 UTC, floored to the hour; --to exclusive): exactly that range.
        --all: every closed hour in the logs (hours with an <HH>.closed marker). Neither: the closed \
        hours not covered yet or whose files changed since they were covered (a late file, a file \
        that grew or was replaced), so a scheduled run costs what changed, not the whole history; \
        the summary says how many hours were processed and how many were skipped as unchanged. \
        Every hour rebuilt is covered, for every track, creator and signal at once — an hour \
        without events counts 0 from then on, whatever the realtime layer says.

        Store failures: a store that cannot be reached or opened when the run starts (a server \
        that is down, a password or certificate refused, a database or role that does not exist) \
        ends the command at once with one line and exit status 1. A connection lost in the middle \
        of the run (a PostgreSQL restart or failover) is retried — the run starts again, nothing of \
        it having been kept — with a growing delay for up to --reconnect-window, then ends the same way.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "A log file or directory; repeat for more (env COUNTERPOINT_LOGS, comma-separated).")
    var logs: [String] = Environment.list("logs")

    @Option(help: "First hour to rebuild, RFC 3339 UTC (env COUNTERPOINT_FROM).")
    var from: String?

    @Option(help: "End of the hours to rebuild (exclusive), RFC 3339 UTC (env COUNTERPOINT_TO).")
    var to: String?

    @Flag(help: "Rebuild every closed hour, changed or not (env COUNTERPOINT_ALL).")
    var all = Environment.bool("all")

    @Option(help: "Parsing threads (default: one per core) (env COUNTERPOINT_WORKERS).")
    var workers: Int = Environment.integer("workers", default: BatchConfiguration.defaultWorkers)

    @Option(help: "Seconds to keep retrying a run whose store connection was lost mid-run (default 60) (env COUNTERPOINT_RECONNECT_WINDOW).")
    var reconnectWindow: Int = Environment.integer("reconnect-window", default: 60)

    @OptionGroup var output: SummaryOutput

    /// `--from`/`--to`, falling back to the environment.
    private var firstHour: String? { from ?? Environment.optionalString("from") }
    private var endHour: String? { to ?? Environment.optionalString("to") }

    func validate() throws {
        guard !logs.isEmpty else { throw ValidationError("give at least one --logs file or directory") }
        guard workers >= 1 else { throw ValidationError("--workers must be at least 1") }
        guard reconnectWindow >= 0 else { throw ValidationError("--reconnect-window must be at least 0 seconds") }
        let first = try parseHourFlag(firstHour, flag: "--from")
        let last = try parseHourFlag(endHour, flag: "--to")
        if let first, let last, first >= last {
            throw ValidationError("--from (\(first)) must be before --to (\(last))")
        }
        if all && (first != nil || last != nil) {
            throw ValidationError("--all rebuilds every closed hour; give either --all or --from/--to")
        }
    }

    func run() throws {
        let logger = Bootstrap.logging(level: common.logLevel)
        let progress = output.progressLine()
        var configuration = BatchConfiguration(
            logPaths: logs, from: try parseHourFlag(firstHour, flag: "--from"), to: try parseHourFlag(endHour, flag: "--to"), all: all,
            store: try storeOptions.backend(dataDirectory: common.dataDirectory), scratchDirectory: common.dataDirectory,
            workers: workers,
            progress: { step in
                let fraction = step.totalBytes > 0 ? Double(step.bytesRead) / Double(step.totalBytes) : 0
                let rate = step.elapsedSeconds > 0 ? Double(step.eventsRead) / step.elapsedSeconds : 0
                progress.update("batch: " + String(format: "%5.1f%%", fraction * 100) +
                                "  \(ByteCount(step.bytesRead)) of \(ByteCount(step.totalBytes))  " +
                                String(format: "%.2f", rate / 1e6) + " M events/s")
            })
        configuration.reconnectWindow = .seconds(reconnectWindow)
        let summary: BatchSummary
        do {
            summary = try buildBatch(configuration, logger: logger).run()
        } catch {
            progress.finish()
            throw CommandFailure("batch failed, nothing was changed: \(configuration.store.describe(error))")
        }
        progress.finish()
        try output.print(summary.jsonObject, text: summary.text)
    }
}
