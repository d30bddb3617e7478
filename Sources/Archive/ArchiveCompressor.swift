import EventLogs
import Logging
import Runtime

/// Gzips the files of closed hours on a thread of its own, so that compressing an hour
/// (seconds for a busy hour) never holds up the consumer's thread. Each file goes through
/// `LogCompression.compress`: the plain file stays until its `.gz` is complete and durable.
///
/// A file that cannot be compressed (a full disk) is left plain and logged: `batch` reads
/// plain files as well, and the next start tries again. `stop` finishes the files this
/// process closed (the hours closed in the last moments: seconds of work) and drops the
/// files found on disk, which the next start queues again.
final class ArchiveCompressor: Sendable {
    private struct Job {
        var path: String
        /// Skip the file if it was modified more recently than this (it may still be written).
        var quietPeriod: Duration?
    }

    /// The compressing thread and its queue, from `start` on.
    private let thread = Locked<JobThread<Void>?>(nil)
    /// Raised by `stop`: files found on disk are dropped from then on.
    private let stopSignal = StopSignal()
    private let compressed = Locked<[LogCompression.Compressed]>([])
    private let level: Int
    private let logger: Logger

    init(level: Int = LogWriter.defaultGzipLevel, logger: Logger) {
        self.level = level
        self.logger = logger
    }

    /// Starts the thread; files queued before stay plain (the next start queues them again).
    func start() {
        thread.withLock { thread in
            guard thread == nil, !stopSignal.isRequested else { return }
            thread = try? JobThread(name: "archive-gzip", open: {})
        }
    }

    /// Queues finished files; with `quietPeriod`, only if untouched that long when their turn comes.
    func enqueue(_ paths: [String], quietPeriod: Duration? = nil) {
        guard let thread = thread.value else { return }
        for path in paths {
            let job = Job(path: path, quietPeriod: quietPeriod)
            _ = thread.start { [self] _ in
                // Once stopping, files found on disk wait for the next start.
                guard job.quietPeriod == nil || !stopSignal.isRequested else { return }
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

    /// Compresses the queued files this process wrote, drops the others, and ends the thread.
    func stop() {
        stopSignal.request()
        thread.value?.stop()
    }

    private func compress(_ job: Job) -> LogCompression.Compressed? {
        guard let file = try? LogFile(path: job.path) else { return nil }   // gone meanwhile: nothing to do
        if let quietPeriod = job.quietPeriod {
            let age = Double(WallClock.epochMilliseconds()) / 1e3 - Double(file.modifiedNanoseconds) / 1e9
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
