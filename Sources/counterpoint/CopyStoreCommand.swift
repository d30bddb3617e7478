import ArgumentParser
import CounterStore
import Foundation
import Runtime

struct CopyStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy-store",
        abstract: "Copy the SQLite stores under --data-dir into an empty PostgreSQL database, once.",
        discussion: """
        The one-shot move from SQLite to PostgreSQL (docs/postgresql.md). Stop `consume`, `run` and \
        scheduled batches first; readers may keep answering from SQLite meanwhile. The copy takes the \
        batch layer's covered hours with their waveform and breakdown counts (the day and month \
        rollups are rebuilt; the run history becomes one run summarizing the copy), then the realtime \
        layer's rows and every partition's next offset in one flush, so consumers started with
        --store resume exactly where the SQLite consumer stopped. A target that already holds counts \
        or offsets is refused and left unchanged.
        """)

    @OptionGroup var common: CommonOptions

    @Option(name: .customLong("store"), help: ArgumentHelp("""
        The PostgreSQL database to copy into, postgresql://user[:password]@host[:port]/dbname[?…] \
        (env COUNTERPOINT_STORE).
        """, valueName: "url"))
    var store: String?

    @OptionGroup var output: SummaryOutput

    func validate() throws {
        guard case .postgres = try target() else {
            throw ValidationError("--store must name the PostgreSQL database to copy into (postgresql://…)")
        }
        let location = StoreLocation(directory: common.dataDirectory)
        guard FileManager.default.fileExists(atPath: location.batchPath) || FileManager.default.fileExists(atPath: location.realtimePath)
        else {
            throw ValidationError("no SQLite store under --data-dir \(common.dataDirectory) (neither batch.sqlite nor realtime.sqlite)")
        }
    }

    private func target() throws -> StoreBackend {
        do {
            return try StoreBackend(store: store ?? Environment.optionalString("store"), dataDirectory: common.dataDirectory)
        } catch {
            throw ValidationError("--store: \(error)")
        }
    }

    func run() throws {
        let logger = Bootstrap.logging(level: common.logLevel)
        let backend = try target()
        guard case let .postgres(url) = backend else { return }
        let source = StoreLocation(directory: common.dataDirectory)
        logger.info("copying the SQLite stores into PostgreSQL", metadata: ["from": "\(source.directory)", "to": "\(backend)"])
        let start = ContinuousClock.now
        let line = output.progressLine()
        let summary = try StoreCopy.copy(from: source, toPostgres: url) { progress in
            line.update("copy-store: \(progress.batchRows.formatted()) of \(progress.batchRowsInAll.formatted()) batch rows")
        }
        line.finish()
        let elapsed = ContinuousClock.now - start
        let seconds = elapsed.seconds
        try output.print([
            "batch_rows": summary.batchRows, "realtime_rows": summary.realtimeRows, "partitions": summary.partitions,
            "seconds": (seconds * 1000).rounded() / 1000,
        ], text: "copied \(summary.batchRows) batch rows, \(summary.realtimeRows) realtime rows and the offsets of "
                 + "\(summary.partitions) partitions in \(String(format: "%.1f", seconds)) s")
    }
}
