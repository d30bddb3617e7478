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

    private struct Queue {
        var jobs: [Job] = []
        var busy = false
        var stopping = false
        var started = false
        var compressed: [LogCompression.Compressed] = []

        /// Nothing queued and nothing under way (or no thread that would take it).
        var isIdle: Bool { (jobs.isEmpty && !busy) || !started }
    }

    private let queue = Locked(Queue())
    private let thread = Locked<BlockingThread?>(nil)
    private let level: Int
    private let logger: Logger

    init(level: Int = LogWriter.defaultGzipLevel, logger: Logger) {
        self.level = level
        self.logger = logger
    }

    func start() {
        queue.withLock { $0.started = true }
        thread.set(BlockingThread(name: "archive-gzip") { [self] in work() })
    }

    /// Queues finished files; with `quietPeriod`, only if untouched that long when their turn comes.
    func enqueue(_ paths: [String], quietPeriod: Duration? = nil) {
        guard !paths.isEmpty else { return }
        queue.withLock { $0.jobs.append(contentsOf: paths.map { Job(path: $0, quietPeriod: quietPeriod) }) }
    }

    /// Waits until the queue is empty and nothing is being compressed (for tests and benchmarks).
    func waitUntilIdle() {
        queue.wait(until: \.isIdle) { _ in }
    }

    /// Files compressed so far, oldest first.
    var compressedFiles: [LogCompression.Compressed] {
        queue.withLock { $0.compressed }
    }

    /// Compresses the queued files this process wrote, drops the others, and ends the thread.
    func stop() {
        queue.withLock { queue in
            queue.stopping = true
            // Without a thread nobody would take the rest: it stays plain for the next start.
            let started = queue.started
            queue.jobs.removeAll { $0.quietPeriod != nil || !started }
        }
        thread.value?.join()
    }

    private func work() {
        while let job = queue.wait(until: { !$0.jobs.isEmpty || $0.stopping }, then: { queue -> Job? in
            guard !queue.jobs.isEmpty else { return nil }
            queue.busy = true
            return queue.jobs.removeFirst()
        }) {
            let done = compress(job)
            queue.withLock { queue in
                if let done { queue.compressed.append(done) }
                queue.busy = false
            }
        }
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
