import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Logging
import Runtime

/// Recomputes authoritative counts from event logs (README.md `batch`): validate,
/// de-duplicate by `event_id` per hour, aggregate per (track, hour), and replace the
/// covered hours in the batch store in one transaction — readers see the old counts or
/// the new ones, never a mix, and a run that fails or is killed changes nothing.
public enum BatchJob {
    /// One run, run again from the start when the store's connection is lost in the middle of
    /// it (a PostgreSQL restart or failover: nothing of the run committed, and a multi-host URI
    /// with `target_session_attrs=read-write` reaches the new primary), with a growing delay,
    /// for up to `reconnectWindow`; then `BatchError.connectionNotRegained`. So is a run that
    /// found only standbys (a failover under way when it started). A store this run never
    /// reached (down, a refused password or certificate, no such database) is no such case:
    /// its error is thrown at once. A run whose COMMIT was cut may have committed;
    /// running it again replaces the same hours with the same counts. See docs/postgresql.md.
    public static func run(_ configuration: BatchConfiguration, logger: Logger) throws -> BatchSummary {
        var reached = false
        var giveUp: ContinuousClock.Instant?
        var backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(5))
        while true {
            do {
                return try runOnce(configuration, reached: &reached, logger: logger)
            } catch where StoreBackend.lostConnection(error) && (reached || StoreBackend.awaitingPrimary(error)) {
                let deadline = giveUp ?? ContinuousClock.now + configuration.reconnectWindow
                giveUp = deadline
                guard ContinuousClock.now + backoff.next < deadline else {
                    throw BatchError.connectionNotRegained(window: configuration.reconnectWindow, error)
                }
                let delay = backoff.failed()
                let what = reached ? "lost its store connection mid-run" : "cannot start: \(StoreBackend.awaitingPrimaryCause)"
                logger.warning("batch run \(what); nothing of it was kept; running it again within the reconnect window", metadata: [
                    "store.error": "\(error)", "retry.delay": "\(delay)",
                    "retry.seconds_left": "\(Int((deadline - ContinuousClock.now).seconds))",
                ])
                BlockingThread.sleep(for: delay)
            } catch where !reached && StoreBackend.lostConnection(error) {
                throw BatchError.storeUnreachable(error)
            }
        }
    }

    /// - Parameter reached: set once the store has been opened: from then on a lost connection
    ///   is one lost mid-run.
    private static func runOnce(_ configuration: BatchConfiguration, reached: inout Bool,
                                logger: Logger) throws -> BatchSummary {
        let started = ContinuousClock.now
        let startedAt = configuration.clock.epochMilliseconds()
        // Everything that can be wrong with the input is found before the store is touched.
        // Files are only `stat`ed here (what their fingerprints need); the ones the run reads are
        // opened below, before anything is applied.
        let inventory = try LogDiscovery.inventory(of: configuration.logPaths, openingFiles: false)
        // The store is opened (and created) only once the hours are known to be valid.
        var opened: (any BatchWriter)?
        var plan = try BatchPlan(inventory: inventory, from: configuration.from, to: configuration.to,
                                 all: configuration.all, recorded: {
            let store = try configuration.store.openBatchWriter()
            opened = store
            reached = true
            return try store.hourSources()
        })
        let store = try opened ?? configuration.store.openBatchWriter()
        reached = true
        var summary = BatchSummary()
        summary.ranges = plan.ranges
        summary.files = plan.fileCount
        summary.hours = plan.hourCount
        summary.hoursSkipped = plan.skippedHours
        summary.hoursWithFilesGone = Coverage(plan.hoursWithFilesGone.map { HourRange($0, $0.advanced(by: 1)) }).ranges
        if !summary.hoursWithFilesGone.isEmpty {
            logger.info("batch run: covered hours whose files are fewer than when they were covered keep their counts", metadata: [
                "batch.hours_with_files_gone": "\(summary.hoursWithFilesGone.map(\.description).joined(separator: " "))",
            ])
        }
        guard !plan.ranges.isEmpty else {
            // Nothing changed since the last runs: nothing to read, nothing to write.
            summary.seconds = (ContinuousClock.now - started).seconds
            logger.info("batch run: no closed hour changed", metadata: ["batch.hours_skipped": "\(plan.skippedHours)"])
            return summary
        }
        // What will be read is opened now: an unreadable file fails the run before the store
        // changes, and gzip is decided by the magic bytes.
        try plan.openFiles()
        logger.info("batch run starting", metadata: [
            "batch.ranges": "\(plan.ranges.map(\.description).joined(separator: " "))",
            "batch.files": "\(plan.fileCount)", "batch.bytes": "\(plan.totalBytes)",
            "batch.hours_skipped": "\(plan.skippedHours)",
        ])

        let bytesRead = SharedCounter()
        let eventsRead = SharedCounter()
        let (totalBytes, files, hours) = (plan.totalBytes, plan.fileCount, Int(plan.hourCount))
        let ticker = configuration.progress.map { report in
            PeriodicThread(name: "batch-progress", every: .milliseconds(250)) {
                report(BatchProgress(files: files, hours: hours, bytesRead: bytesRead.current, totalBytes: totalBytes,
                                     eventsRead: Int(eventsRead.current),
                                     elapsedSeconds: (ContinuousClock.now - started).seconds))
            }
        }
        defer { ticker?.stop() }

        // Files of unknown hour are read once, into compact per-hour records, so that
        // de-duplication stays exact within each hour.
        StagingDirectory.removeAbandoned(in: configuration.scratchDirectory)
        let staging = StagingDirectory(parent: configuration.scratchDirectory)
        defer { staging.remove() }
        var records: [HourRecords] = []
        // Each worker's, added up once all are in (`GroupTally.combined`).
        var tallies: [GroupTally] = []
        if !plan.unpartitioned.isEmpty {
            let pass = UnpartitionedPass(target: plan.coverage, workers: configuration.workers,
                                         spillDirectory: staging.path, memoryBudget: configuration.spillBudgetBytes)
            let output = try pass.run(plan.unpartitioned) { bytesRead.add($0) }
            tallies.append(output.tally)
            eventsRead.add(Int64(output.tally.eventsRead))
            records = output.records
            logger.debug("batch unpartitioned files read", metadata: [
                "batch.seconds": "\((ContinuousClock.now - started).seconds)", "batch.events_read": "\(output.tally.eventsRead)",
            ])
        }

        let results = WorkerPool.start(units: HourUnit.units(files: plan.hourFiles, records: records), target: plan.coverage,
                                       workers: configuration.workers, bytesRead: bytesRead, eventsRead: eventsRead)

        var tracks = Set<Int64>()
        var creators = Set<Int64>()
        var rows = 0
        do {
            _ = try store.replace(ranges: plan.ranges, startedAt: startedAt, sources: plan.sources) { writer in
                while let result = try results.receive() {
                    if let tally = result.tally { tallies.append(tally) }
                    try result.unit.write(to: writer) { subject in
                        if subject.kind == .track { tracks.insert(subject.id) } else { creators.insert(subject.id) }
                    }
                    rows += result.unit.trackRows
                }
                logger.debug("batch rows written", metadata: [
                    "batch.seconds": "\((ContinuousClock.now - started).seconds)", "batch.rows": "\(rows)",
                ])
                summary.add(GroupTally.combined(tallies))
                summary.tracks = tracks.count
                summary.creators = creators.count
                summary.rows = rows
                summary.bytesRead = bytesRead.current
                summary.seconds = (ContinuousClock.now - started).seconds
                return summary.batchRun(startedAt: startedAt, finishedAt: configuration.clock.epochMilliseconds())
            }
        } catch {
            // Let the workers wind down before the error leaves; their results are discarded.
            while (try? results.receive()) != nil {}
            throw error
        }
        // The commit is part of the run's time.
        summary.seconds = (ContinuousClock.now - started).seconds
        let finalSummary = summary
        logger.info("batch run finished", metadata: [
            "batch.events_read": "\(finalSummary.eventsRead)", "batch.duplicates": "\(finalSummary.duplicates)",
            "batch.rejected": "\(finalSummary.rejections.total)", "batch.rows": "\(finalSummary.rows)",
            "batch.seconds": "\(finalSummary.seconds)",
        ])
        return finalSummary
    }
}

/// One hour's work: its files and the records unpartitioned files held for it.
struct HourUnit: Sendable {
    var hour: Hour
    var files: [LogFile]
    var records: [HourRecords]
    /// Bytes to read, records counted as the JSON lines they came from (~6× larger).
    var size: Int64

    /// Largest first, so that two workers finish close together.
    static func units(files: [Hour: [LogFile]], records: [HourRecords]) -> [HourUnit] {
        var units: [Hour: HourUnit] = [:]
        for (hour, hourFiles) in files {
            units[hour] = HourUnit(hour: hour, files: hourFiles, records: [], size: BatchPlan.size(of: hourFiles))
        }
        for source in records {
            for (hour, bytes) in source.bytesByHour {
                units[hour, default: HourUnit(hour: hour, files: [], records: [], size: 0)].records.append(source)
                units[hour]!.size += Int64(bytes) * 6
            }
        }
        return units.values.sorted { $0.size != $1.size ? $0.size > $1.size : $0.hour < $1.hour }
    }
}
