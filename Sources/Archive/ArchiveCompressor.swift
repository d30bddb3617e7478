import EventLogs
import Logging
import Runtime

/// Gzips the files of closed hours on a thread of its own, so that compressing an hour
/// (seconds for a busy hour) never holds up the consumer's thread. Each file goes through
/// `LogCompression.compress`: the plain file stays until its `.gz` is complete and durable.
///
/// A file that cannot be compressed (a full disk) is left plain and logged: `batch` reads
/// plain files as well, and the next start tries again. `stop` goes on with the files this
/// process closed for at most `stopBudget`, so that a stop stays prompt however long the queue
/// (a replayed month closes hundreds of hours at once, two fsyncs each), and drops the rest
/// and the files found on disk: they stay plain, and the next start queues them again.
final class ArchiveCompressor: Sendable {
    private struct Job {
        var path: String
        /// Skip the file if it was modified more recently than this (it may still be written).
        var quietPeriod: Duration?
    }

    /// The compressing thread and its queue, from `start` on.
    private let thread = Locked<JobThread<Void>?>(nil)
    /// Set by `stop`, `stopBudget` after it was called: from then on files found on disk are
    /// dropped, and past it the others too.
    private let stopDeadline = Locked<ContinuousClock.Instant?>(nil)
    /// Files a stop left plain for want of time.
    private let leftPlain = Locked(0)
    private let compressed = Locked<[LogCompression.Compressed]>([])
    private let level: Int
    private let stopBudget: Duration
    private let logger: Logger

    /// Default stop budget: 3 s, a fifth of what supervisors usually give a stop (15 s), in
    /// which an idle machine gzips about two thousand small hour files.
    static let defaultStopBudget: Duration = .seconds(3)

    init(level: Int = LogWriter.defaultGzipLevel, stopBudget: Duration = ArchiveCompressor.defaultStopBudget, logger: Logger) {
        self.level = level
        self.stopBudget = stopBudget
        self.logger = logger
    }

    /// Starts the thread; files queued before stay plain (the next start queues them again).
    func start() {
        thread.withLock { thread in
            guard thread == nil, stopDeadline.value == nil else { return }
            thread = try? JobThread(name: "archive-gzip", open: {})
        }
    }

    /// Queues finished files; with `quietPeriod`, only if untouched that long when their turn comes.
    func enqueue(_ paths: [String], quietPeriod: Duration? = nil) {
        guard let thread = thread.value else { return }
        for path in paths {
            let job = Job(path: path, quietPeriod: quietPeriod)
            _ = thread.start { [self] _ in
                // Once stopping, files found on disk wait for the next start, and so do the
                // others once the stop's budget is spent.
                if let deadline = stopDeadline.value {
                    guard job.quietPeriod == nil else { return }
                    if ContinuousClock.now >= deadline {
                        leftPlain.withLock { $0 += 1 }
                        return
                    }
                }
                if let done = compress(job) { compressed.withLock { $0.append(done) } }
            }
        }
    }

    /// Waits until every file queued so far is done (for tests and benchmarks).
    func waitUntilIdle() {
        _ = thread.value?.start { _ in }.wait()
    }

    /// Files compressed so far, oldest first.
    var compressedFiles: [LogCompression.Compressed] {
        compressed.value
    }

    /// Files a stop left plain for want of time (the next start queues them again).
    var filesLeftPlain: Int {
        leftPlain.value
    }

    /// Compresses the queued files this process wrote for at most `stopBudget`, drops the
    /// others, and ends the thread.
    func stop() {
        stopDeadline.withLock { deadline in deadline = deadline ?? .now + stopBudget }
        thread.value?.stop()
        let left = leftPlain.value
        if left > 0 {
            logger.info("archive files left plain until the next start", metadata: [
                "archive.files": "\(left)", "archive.stop_budget": "\(stopBudget)",
            ])
        }
    }

    /// Whether `stop` has been called (for tests).
    var isStopping: Bool {
        stopDeadline.value != nil
    }

    /// Holds the compressing thread until `release` is requested: files queued meanwhile wait
    /// (for tests).
    func hold(until release: StopSignal) {
        _ = thread.value?.start { _ in release.wait() }
    }

    private func compress(_ job: Job) -> LogCompression.Compressed? {
        guard let file = try? LogFile(path: job.path) else { return nil }   // gone meanwhile: nothing to do
        if let quietPeriod = job.quietPeriod {
            // Against the file's modification time, which the system's clock stamped.
            let age = Double(WallClock.system.epochMilliseconds()) / 1e3 - Double(file.modifiedNanoseconds) / 1e9
            guard age >= Double(quietPeriod.components.seconds) else { return nil }
        }
        do {
            let began = ContinuousClock.now
            let done = try LogCompression.compress(path: job.path, level: level)
            logger.debug("archive file compressed", metadata: [
                "archive.file": "\(done.path)", "archive.plain_bytes": "\(done.plainBytes)",
                "archive.gzip_bytes": "\(done.gzipBytes)", "archive.seconds": "\(ContinuousClock.now - began)",
            ])
            return done
        } catch {
            logger.warning("archive file left uncompressed", metadata: ["archive.file": "\(job.path)", "archive.error": "\(error)"])
            return nil
        }
    }
}
