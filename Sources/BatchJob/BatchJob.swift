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
    /// One run, run again from the start when the store's connection is lost (a PostgreSQL
    /// restart or failover: nothing of the run committed, and a multi-host URI with
    /// `target_session_attrs=read-write` reaches the new primary), with a growing delay, for up
    /// to `reconnectWindow`. A run whose COMMIT was cut may have committed; running it again
    /// replaces the same hours with the same counts. See docs/postgresql.md.
    public static func run(_ configuration: BatchConfiguration, logger: Logger) throws -> BatchSummary {
        let giveUp = ContinuousClock.now + configuration.reconnectWindow
        var backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(5))
        while true {
            do {
                return try runOnce(configuration, logger: logger)
            } catch where StoreBackend.lostConnection(error) && ContinuousClock.now + backoff.next < giveUp {
                let delay = backoff.failed()
                logger.warning("batch run lost its store connection; nothing of it was kept; running it again", metadata: [
                    "store.error": "\(error)", "retry.delay": "\(delay)",
                ])
                BlockingThread.sleep(for: delay)
            }
        }
    }

    private static func runOnce(_ configuration: BatchConfiguration, logger: Logger) throws -> BatchSummary {
        let started = ContinuousClock.now
        let startedAt = WallClock.epochMilliseconds()
        // Everything that can be wrong with the input is found before the store is touched.
        let inventory = try LogDiscovery.inventory(of: configuration.logPaths)
        // The store is opened (and created) only once the hours are known to be valid.
        var opened: (any BatchWriter)?
        let plan = try BatchPlan(inventory: inventory, from: configuration.from, to: configuration.to,
                                 all: configuration.all, recorded: {
            let store = try configuration.store.openBatchWriter()
            opened = store
            return try store.hourSources()
        })
        let store = try opened ?? configuration.store.openBatchWriter()
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
        logger.info("batch run starting", metadata: [
            "batch.ranges": "\(plan.ranges.map(\.description).joined(separator: " "))",
            "batch.files": "\(plan.fileCount)", "batch.bytes": "\(plan.totalBytes)",
            "batch.hours_skipped": "\(plan.skippedHours)",
        ])

        let bytesRead = SharedCounter()
        let eventsRead = SharedCounter()
        let totalBytes = plan.totalBytes
        let ticker = configuration.progress.map { report in
            PeriodicThread(name: "batch-progress", every: .milliseconds(250)) {
                report(BatchProgress(bytesRead: bytesRead.current, totalBytes: totalBytes,
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

        let units = HourUnit.units(files: plan.hourFiles, records: records)
        // ~200 bytes per event; the largest unit sizes the tables once.
        let expectedPerUnit = Int(min(1 << 23, max(1024, (units.first?.size ?? 0) / 150)))
        let target = plan.coverage
        let workerCount = min(configuration.workers, max(1, units.count))
        let results = ResultChannel<(unit: UnitRows, tally: GroupTally?)>(workers: workerCount)
        let nextUnit = SharedCounter()
        for _ in 0..<workerCount {
            _ = BlockingThread(name: "batch-worker", stackSize: 1 << 22) {
                var processor = GroupProcessor(target: target, expectedEventsPerUnit: expectedPerUnit)
                do {
                    while !results.hasFailed {
                        let index = Int(nextUnit.add(1))
                        guard index < units.count else { break }
                        let before = processor.tally.eventsRead
                        for (fileIndex, file) in units[index].files.enumerated() {
                            try processor.process(file, unit: index, index: fileIndex) { bytesRead.add($0) }
                        }
                        for source in units[index].records {
                            try processor.absorb(source, hour: units[index].hour)
                        }
                        eventsRead.add(Int64(processor.tally.eventsRead - before))
                        results.send((processor.finishUnit(), nil))
                    }
                    results.send((UnitRows(), processor.tally))
                    results.workerFinished()
                } catch {
                    results.workerFinished(with: error)
                }
            }
        }

        var tracks = Set<Int64>()
        var rows = 0
        do {
            _ = try store.replace(ranges: plan.ranges, startedAt: startedAt, sources: plan.sources) { writer in
                while let result = try results.receive() {
                    if let tally = result.tally { tallies.append(tally) }
                    try result.unit.write(to: writer) { tracks.insert($0) }
                    rows += result.unit.rows.count
                }
                logger.debug("batch rows written", metadata: [
                    "batch.seconds": "\((ContinuousClock.now - started).seconds)", "batch.rows": "\(rows)",
                ])
                summary.add(GroupTally.combined(tallies))
                summary.tracks = tracks.count
                summary.rows = rows
                summary.bytesRead = bytesRead.current
                summary.seconds = (ContinuousClock.now - started).seconds
                return summary.batchRun(startedAt: startedAt, finishedAt: WallClock.epochMilliseconds())
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
