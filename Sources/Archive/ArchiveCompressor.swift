import EventLogs
import Foundation
import Logging

/// Gzips the files of closed hours on a thread of its own, so that compressing an hour
/// (seconds for a busy hour) never holds up the consumer's thread. Each file goes through
/// `LogCompression.compress`: the plain file stays until its `.gz` is complete and durable.
///
/// A file that cannot be compressed (a full disk) is left plain and logged: `batch` reads
/// plain files as well, and the next start tries again. `stop` finishes the files this
/// process closed (the hours closed in the last moments: seconds of work) and drops the
/// files found on disk, which the next start queues again.
final class ArchiveCompressor: @unchecked Sendable {
    // @unchecked: `queue`, `busy`, `stopping`, `started` and `compressed` are only touched
    // while `condition` is locked; the thread is started once.
    private struct Job {
        var path: String
        /// Skip the file if it was modified more recently than this (it may still be written).
        var quietPeriod: Duration?
    }

    private let condition = NSCondition()
    private var queue: [Job] = []
    private var busy = false
    private var stopping = false
    private var compressed: [LogCompression.Compressed] = []
    private let level: Int
    private let logger: Logger
    private var started = false

    init(level: Int = LogWriter.defaultGzipLevel, logger: Logger) {
        self.level = level
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in work() }
        thread.name = "archive-gzip"
        condition.lock()
        started = true
        condition.unlock()
        thread.start()
    }

    /// Queues finished files; with `quietPeriod`, only if untouched that long when their turn comes.
    func enqueue(_ paths: [String], quietPeriod: Duration? = nil) {
        guard !paths.isEmpty else { return }
        condition.lock()
        queue.append(contentsOf: paths.map { Job(path: $0, quietPeriod: quietPeriod) })
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the queue is empty and nothing is being compressed (for tests and benchmarks).
    func waitUntilIdle() {
        condition.lock()
        while (!queue.isEmpty || busy) && started { condition.wait() }
        condition.unlock()
    }

    /// Files compressed so far, oldest first.
    var compressedFiles: [LogCompression.Compressed] {
        condition.lock()
        defer { condition.unlock() }
        return compressed
    }

    /// Compresses the queued files this process wrote, drops the others, and ends the thread.
    func stop() {
        condition.lock()
        stopping = true
        // Without a thread nobody would take the rest: it stays plain for the next start.
        queue.removeAll { $0.quietPeriod != nil || !started }
        condition.broadcast()
        while busy || !queue.isEmpty { condition.wait() }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            let job = queue.removeFirst()
            busy = true
            condition.unlock()

            let done = compress(job)

            condition.lock()
            if let done { compressed.append(done) }
            busy = false
            condition.broadcast()
            condition.unlock()
        }
    }

    private func compress(_ job: Job) -> LogCompression.Compressed? {
        guard let file = try? LogFile(path: job.path) else { return nil }   // gone meanwhile: nothing to do
        if let quietPeriod = job.quietPeriod {
            let age = Date().timeIntervalSince1970 - Double(file.modifiedNanoseconds) / 1e9
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
