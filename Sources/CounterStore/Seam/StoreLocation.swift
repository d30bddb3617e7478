import CounterpointCore

/// Where the two stores live: `<directory>/realtime.sqlite` and `<directory>/batch.sqlite`.
///
/// Two files, not two tables, so that a batch rebuild (one long write transaction on the
/// batch file) never holds the lock that realtime flushes need.
public struct StoreLocation: Sendable, Hashable {
    public var directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public var realtimePath: String { directory + "/realtime.sqlite" }
    public var batchPath: String { directory + "/batch.sqlite" }
}
