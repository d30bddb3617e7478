import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Logging

/// Recomputes authoritative counts from event logs (SPEC §4 `batch`): validate,
/// de-duplicate by `event_id` per hour, aggregate per (track, hour), and replace the
/// covered hours in the batch store in one transaction — readers see the old counts or
/// the new ones, never a mix, and a run that fails or is killed changes nothing.
public enum BatchJob {
    public static func run(_ configuration: BatchConfiguration, logger: Logger) throws -> BatchSummary {
        let started = ContinuousClock.now
        let startedAt = epochMilliseconds()
        // Everything that can be wrong with the input is found before the store is touched.
        let inventory = try LogDiscovery.inventory(of: configuration.logPaths)
        var plan = try BatchPlan(inventory: inventory, from: configuration.from, to: configuration.to)
        let store = try BatchStore(location: configuration.location)
        logger.info("batch run starting", metadata: [
            "batch.ranges": "\(plan.ranges.map(\.description).joined(separator: " "))",
            "batch.files": "\(plan.fileCount)", "batch.bytes": "\(plan.totalBytes)",
        ])

        var summary = BatchSummary()
        summary.ranges = plan.ranges
        summary.files = plan.fileCount
        summary.hours = plan.hourCount
        let bytesRead = SharedCounter()
        let eventsRead = SharedCounter()
        let totalBytes = plan.totalBytes
        let ticker = configuration.progress.map { report in
            ProgressTicker(every: .milliseconds(250)) {
                report(BatchProgress(bytesRead: bytesRead.current, totalBytes: totalBytes,
                                     eventsRead: Int(eventsRead.current),
                                     elapsedSeconds: (ContinuousClock.now - started).seconds))
            }
        }
        defer { ticker?.stop() }

        // Files of unknown hour are split by hour first, so that de-duplication stays exact.
        StagingDirectory.removeAbandoned(in: configuration.location.directory)
        let staging = StagingDirectory(parent: configuration.location.directory)
        defer { staging.remove() }
        let unpartitioned = plan.units.filter { $0.count == 1 && $0[0].hour == nil }.map { $0[0] }
        if !unpartitioned.isEmpty {
            var tally = GroupTally()
            try staging.create()
            let splitter = UnpartitionedSplitter(target: plan.coverage, stagingDirectory: staging.path)
            _ = try splitter.split(unpartitioned, tally: &tally) { bytesRead.add($0) }
            summary.absorb(tally)
            let staged = try LogDiscovery.inventory(of: [staging.path])
            plan.mergeStaged(staged.files)
        }

        // ~200 bytes per event; the largest unit sizes the tables once.
        let largestUnit = plan.units.first.map(BatchPlan.size(of:)) ?? 0
        let expectedPerUnit = Int(min(1 << 23, max(1024, largestUnit / 150)))
        let target = plan.coverage
        let units = plan.units
        let workerCount = min(configuration.workers, max(1, units.count))
        let results = ResultChannel<(rows: [PlayCounts.Element], dimensions: [DimensionRow], tally: GroupTally?)>(workers: workerCount)
        let nextUnit = SharedCounter()
        for _ in 0..<workerCount {
            let thread = Thread {
                Thread.current.name = "batch-worker"
                let processor = GroupProcessor(target: target, expectedEventsPerUnit: expectedPerUnit)
                do {
                    while !results.hasFailed {
                        let index = Int(nextUnit.add(1))
                        guard index < units.count else { break }
                        let before = processor.tally.eventsRead
                        for file in units[index] {
                            try processor.process(file) { bytesRead.add($0) }
                        }
                        eventsRead.add(Int64(processor.tally.eventsRead - before))
                        let unit = processor.finishUnit()
                        results.send((unit.rows, unit.dimensions, nil))
                    }
                    results.send(([], [], processor.tally))
                    results.workerFinished()
                } catch {
                    results.workerFinished(with: error)
                }
            }
            thread.stackSize = 1 << 22
            thread.start()
        }

        var tracks = Set<Int64>()
        var rows = 0
        do {
            _ = try store.replace(ranges: plan.ranges, startedAt: startedAt) { writer in
                while let result = try results.receive() {
                    if let tally = result.tally { summary.absorb(tally) }
                    // Both lists are in (track, hour) order; a row without dimension counts has no entry.
                    var next = 0
                    for row in result.rows {
                        var dimensions: [UInt8] = []
                        if next < result.dimensions.count, result.dimensions[next].trackID == row.trackID,
                           result.dimensions[next].hour == row.hour {
                            dimensions = result.dimensions[next].encoded
                            next += 1
                        }
                        try writer.write(trackID: row.trackID, hour: row.hour, plays: row.plays, dimensions: dimensions)
                        tracks.insert(row.trackID)
                    }
                    rows += result.rows.count
                }
                logger.debug("batch rows written", metadata: [
                    "batch.seconds": "\((ContinuousClock.now - started).seconds)", "batch.rows": "\(rows)",
                ])
                summary.tracks = tracks.count
                summary.rows = rows
                summary.bytesRead = bytesRead.current
                summary.seconds = (ContinuousClock.now - started).seconds
                return summary.batchRun(startedAt: startedAt, finishedAt: epochMilliseconds())
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

    static func epochMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}

extension Duration {
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
