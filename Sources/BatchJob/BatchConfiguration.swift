import CounterpointCore
import CounterStore
import Runtime

/// What one batch run reads and where it writes.
public struct BatchConfiguration: Sendable {
    /// Log files or directories (searched recursively), plain or gzip.
    public var logPaths: [String]
    /// First hour to rebuild (inclusive). `nil`: the first closed hour in the logs.
    /// With `from` or `to`, exactly that range is rebuilt.
    public var from: Hour?
    /// End of the hours to rebuild (exclusive). `nil`: the hour after the last closed hour.
    public var to: Hour?
    /// Without `from`/`to`: rebuild every closed hour (`true`), or only the closed hours not
    /// covered yet or whose files changed since they were covered (`false`, the default, so a
    /// scheduled run costs what changed, not the whole history).
    public var all: Bool
    /// The store the batch layer replaces hours in (SQLite files or PostgreSQL).
    public var store: StoreBackend
    /// Where a run keeps its scratch files (spilled records of unpartitioned files): the data
    /// directory.
    public var scratchDirectory: String
    /// Parsing threads. Hour groups are independent, so each worker takes whole hours.
    public var workers: Int
    /// Called about four times a second while the run is going, from a background thread.
    public var progress: (@Sendable (BatchProgress) -> Void)?
    /// Bytes of compact event records read from unpartitioned files that are kept in memory
    /// before they are spilled to per-hour files beside the stores (see `HourRecords`).
    /// ~35 bytes an event: the default holds ~7 M events. Default 256 MiB.
    public var spillBudgetBytes: Int = 256 << 20
    /// How long a run whose PostgreSQL connection was lost (a restart, a failover to a
    /// standby) is run again, with a growing delay, before it fails. Default 60 s.
    public var reconnectWindow: Duration = .seconds(60)
    /// "Now", as recorded when each run starts and finishes.
    public var clock = WallClock.system

    public init(logPaths: [String], from: Hour? = nil, to: Hour? = nil, all: Bool = false, store: StoreBackend,
                scratchDirectory: String, workers: Int = BatchConfiguration.defaultWorkers,
                progress: (@Sendable (BatchProgress) -> Void)? = nil) {
        self.logPaths = logPaths
        self.from = from
        self.to = to
        self.all = all
        self.store = store
        self.scratchDirectory = scratchDirectory
        self.workers = max(1, workers)
        self.progress = progress
    }

    /// One worker per core.
    public static var defaultWorkers: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}

/// How far a run has got, for the progress line.
public struct BatchProgress: Sendable {
    /// The log files the run reads, and the hours it rebuilds.
    public var files: Int
    public var hours: Int
    public var bytesRead: Int64
    public var totalBytes: Int64
    public var eventsRead: Int
    public var elapsedSeconds: Double
}

/// Why a batch run could not be done. Nothing has been written to the batch store when
/// one of these is thrown.
public enum BatchError: Error, CustomStringConvertible {
    case noClosedHours
    case emptyRange(HourRange)
    /// The store could not be reached or opened when the run started (nothing retried).
    case storeUnreachable(any Error)
    /// The store's connection, lost mid-run, was not regained within the reconnect window.
    case connectionNotRegained(window: Duration, any Error)

    public var description: String {
        switch self {
        case .noClosedHours:
            "the logs hold no closed hours (no <HH>.closed markers); pass --from and --to to choose the hours to rebuild"
        case .emptyRange(let range):
            "the hour range \(range) is empty: --from must be before --to"
        case let .storeUnreachable(error):
            "the store cannot be reached or opened (not retried: this run never reached it): \(error)"
        case let .connectionNotRegained(window, error):
            "the store's connection was lost mid-run (or no primary was found) and not regained within \(Int(window.seconds)) s (--reconnect-window): \(error)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
