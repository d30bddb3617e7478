import Foundation

/// A scratch directory beside the stores for per-hour event records spilled while reading
/// unpartitioned files (`HourRecords`), removed after the run.
/// A run killed before it could remove its own (SIGKILL runs no cleanup) leaves it behind;
/// the next run removes those of processes that no longer exist.
struct StagingDirectory {
    private static let prefix = "batch-staging-"
    let path: String

    init(parent: String) {
        path = (parent as NSString).appendingPathComponent("\(Self.prefix)\(getpid())")
    }

    /// Removes staging directories in `parent` whose batch process is gone.
    static func removeAbandoned(in parent: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            // kill(pid, 0) probes without signalling: ESRCH means no such process.
            if kill(pid, 0) == -1 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: (parent as NSString).appendingPathComponent(name))
            }
        }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
