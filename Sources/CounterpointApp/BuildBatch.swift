import BatchJob
import Logging

/// `counterpoint batch`: one run of the batch layer over `configuration.logPaths`.
///
/// A batch is a job, not a service: it ends by itself, and a process killed mid-run leaves the
/// stores as they were, so it runs on the caller's thread, without signal handling, and
/// returns its summary (or throws, having changed nothing).
public func buildBatch(_ configuration: BatchConfiguration, logger: Logger) -> BatchRun {
    BatchRun(configuration: configuration, logger: logger)
}

/// A batch run, built; `run()` does it.
public struct BatchRun: Sendable {
    public let configuration: BatchConfiguration
    let logger: Logger

    public func run() throws -> BatchSummary {
        try BatchJob.run(configuration, logger: logger)
    }
}
