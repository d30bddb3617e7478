import BatchJob
import CounterpointCore
import CounterStore
import Foundation
import Logging
import Runtime

/// The batch layer on a schedule, for `run`: each run is the default incremental batch, which
/// rebuilds only the closed hours of the log directory that are not covered yet or whose files
/// changed since they were covered, so a pass costs what changed, not the history. A run with nothing closed yet does nothing; a failed run changes
/// nothing, reports the component degraded with its reason until a run succeeds again, and
/// the next run comes at the next interval. `stop()` waits for a run under way.
final class ScheduledBatch: BlockingComponent {
    let ended = Completion<Void>()
    private let logDirectory: String
    private let store: StoreBackend
    private let scratchDirectory: String
    private let interval: Duration
    private let clock: WallClock
    let health: ComponentHealth.Handle
    private let logger: Logger
    private let schedule = Locked<PeriodicThread?>(nil)
    /// The covered hours whose files are gone, as the last run found them: warned about once.
    private let hoursWithFilesGone = Locked<[HourRange]>([])

    init(logDirectory: String, store: StoreBackend, scratchDirectory: String, interval: Duration, clock: WallClock = .system,
         health: ComponentHealth.Handle, logger: Logger) {
        self.logDirectory = logDirectory
        self.store = store
        self.scratchDirectory = scratchDirectory
        self.interval = interval
        self.clock = clock
        self.health = health
        self.logger = logger
    }

    func start() {
        schedule.withLock { schedule in
            guard schedule == nil, ended.finished == nil else { return }
            schedule = PeriodicThread(name: "batch-schedule", every: interval) { [self] in runOnce() }
        }
    }

    func stop() {
        let running = schedule.withLock { $0 }
        running?.stop()
        ended.succeed()
    }

    /// One run; returns whether it succeeded (or had nothing to do). `progress` is told how far
    /// the run has got every quarter of a second while it reads.
    @discardableResult
    func runOnce(progress: (@Sendable (BatchProgress) -> Void)? = nil) -> Bool {
        guard FileManager.default.fileExists(atPath: logDirectory) else { return true }
        do {
            var configuration = BatchConfiguration(logPaths: [logDirectory], store: store, scratchDirectory: scratchDirectory)
            configuration.clock = clock
            configuration.progress = progress
            let summary = try BatchJob.run(configuration, logger: logger)
            logger.info("scheduled batch finished", metadata: [
                "batch.hours": "\(summary.hours)", "batch.counted": "\(summary.counted)",
                "batch.seconds": "\(summary.seconds)",
            ])
            let gone = summary.hoursWithFilesGone
            let changed = hoursWithFilesGone.withLock { known in
                defer { known = gone }
                return known != gone
            }
            if changed && !gone.isEmpty {
                logger.warning("scheduled batch: covered hours have fewer log files than when they were covered (deleted by log retention?); their counts are kept, since rebuilding them from the files that remain would lose plays; `counterpoint batch --from … --to …` rebuilds them from what remains", metadata: [
                    "batch.hours_with_files_gone": "\(gone.map(\.description).joined(separator: " "))",
                ])
            }
        } catch BatchError.noClosedHours {
            logger.debug("scheduled batch: no closed hours yet")
        } catch {
            health.update(.degraded(reason: "the last scheduled batch failed and changed nothing: \(store.describe(error))"))
            return false
        }
        // Only a run recovers the component from a failed one, never a state it did not set.
        if case .degraded = health.state {
            health.update(.running)
        }
        return true
    }
}
