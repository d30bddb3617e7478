import Runtime
import SQLiteDB

/// Copies a WAL file's committed pages into the database file from a connection and a thread
/// of its own, every `interval` (a passive checkpoint: it never waits for the writer or the
/// readers, and a commit never waits for it).
///
/// The realtime writer's flushes rewrite the same pages again and again (the current hour's
/// rows and their index entries). Checkpointed by the writer after each commit (SQLite's
/// automatic checkpoint), every flush copied each page it touched back into the file on the
/// store thread; checkpointed here once per interval, a page rewritten by four flushes is
/// copied once, beside the flushes instead of inside them (docs/performance.md, "The flush's
/// checkpoint").
///
/// A connection that cannot be opened or a checkpoint that fails (a full disk) is tried again
/// the next interval; meanwhile the pages stay in the WAL, where readers find them, and the
/// writer's own automatic checkpoint, kept as a backstop, bounds how far the WAL grows.
final class WALCheckpointer: Sendable {
    private let thread: PeriodicThread

    init(path: String, configuration: DatabaseConfiguration, every interval: Duration) {
        // Only the checkpointer's thread uses the connection, so the lock is never contended:
        // it holds a value that is not `Sendable` (see `Locked`), and the checkpoint runs under it.
        let connection = Locked<Database?>(nil)
        thread = PeriodicThread(name: "wal-checkpoint", every: interval) {
            connection.withLock { database in
                if database == nil { database = try? Database(path: path, mode: .readWrite, configuration: configuration) }
                try? database?.checkpoint(.passive)
            }
        }
    }

    /// Stops and joins the thread (a checkpoint under way finishes first); the connection
    /// closes with this object.
    func stop() {
        thread.stop()
    }
}
