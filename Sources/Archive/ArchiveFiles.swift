#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CounterpointCore
import EventLogs

/// The archiver's files: one per (hour, partition) in the `LogLayout`, opened for appending
/// when the first event of that hour arrives from that partition, and the hour's state.
///
/// - Every partition writes its own segment (`<HH>.p<partition>.ndjson`), so archivers sharing
///   one log root in one group never append to the same file while the group is stable.
/// - An hour is *open* until `closeHour` fsyncs and closes its files and writes its closed
///   marker; events that arrive for a closed hour go to its late files
///   (`<HH>.late.p<partition>.ndjson`), which `batch` reads with the hour. An hour is taken as
///   closed when its marker is on disk, so a restarted archiver (or another one) files late
///   events correctly too.
/// - A closed hour's files (those this process wrote) are then gzipped by `compressor`, off
///   this thread; late files stay plain, since late events may still be appended to them.
/// - Appending to a file left mid-line by a crash first ends that line (`LogWriter`), so the
///   torn event becomes one malformed line that `batch` counts as rejected, and its intact
///   copy follows (the archiver re-reads everything after its last commit).
///
/// Not thread-safe: the consumer's thread only.
final class ArchiveFiles {
    private struct FileKey: Hashable {
        var hour: Hour
        var partition: Int32
        var late: Bool
    }

    private enum HourState {
        /// `inheritedFiles` are files found on disk at start-up, written before this process:
        /// closing the hour fsyncs them too before its marker promises their data.
        case open(inheritedFiles: [String])
        case closed
    }

    let root: String
    private let bufferSize: Int
    private var writers: [FileKey: LogWriter] = [:]
    private var hours: [Hour: HourState] = [:]

    /// The last hour written to, and its writer: events arrive in runs of one hour and partition.
    private var recentKey: FileKey?
    private var recentWriter: LogWriter?

    /// Gzips the files of closed hours; `nil` leaves them plain.
    private let compressor: ArchiveCompressor?
    /// How long a file found on disk must be untouched before it is compressed: a file of a
    /// closed hour that another archiver of the group may still be appending to (see `Archiver`).
    private let quietPeriod: Duration

    init(root: String, bufferSize: Int, compressor: ArchiveCompressor? = nil, quietPeriod: Duration = .seconds(600)) {
        self.root = root
        self.bufferSize = bufferSize
        self.compressor = compressor
        self.quietPeriod = quietPeriod
    }

    /// Takes over the hours that have files but no closed marker (an earlier run stopped or
    /// crashed before closing them), so they close when the stream passes them, although no
    /// event of theirs may ever arrive again. With a compressor, first cleans up after a crash
    /// while compressing (`LogCompression.recover`) and queues the plain files of closed hours
    /// (a stop or a crash before they were compressed).
    func adoptUnclosedHours() throws {
        guard access(root, F_OK) == 0 else { return }
        if compressor != nil { _ = try LogCompression.recover(root: root) }
        let inventory = try LogDiscovery.inventory(of: [root])
        let closed = Set(inventory.closedHours)
        let plainOfClosedHours = inventory.files.filter { file in
            file.hour.map(closed.contains) == true && !file.isLate && !file.isGzip
        }
        compressor?.enqueue(plainOfClosedHours.map(\.path), quietPeriod: quietPeriod)
        for file in inventory.files {
            guard let hour = file.hour, !closed.contains(hour) else { continue }
            if case .open(let inherited)? = hours[hour] {
                hours[hour] = .open(inheritedFiles: inherited + [file.path])
            } else {
                hours[hour] = .open(inheritedFiles: [file.path])
            }
        }
    }

    var openHours: [Hour] {
        hours.compactMap { hour, state in
            if case .open = state { return hour }
            return nil
        }.sorted()
    }

    var openFileCount: Int { writers.count }

    /// Appends `line` to the file of `hour` and `partition`; returns whether it went to a late file.
    @discardableResult
    func write(_ line: UnsafeRawBufferPointer, hour: Hour, partition: Int32) throws -> Bool {
        if let recentKey, let recentWriter, recentKey.hour == hour, recentKey.partition == partition {
            try recentWriter.write(line: line)
            return recentKey.late
        }
        let key = FileKey(hour: hour, partition: partition, late: isClosed(hour))
        let writer = try writers[key] ?? openWriter(key)
        try writer.write(line: line)
        recentKey = key
        recentWriter = writer
        return key.late
    }

    /// Fsyncs every open file, so that everything written so far survives a crash.
    func syncAll() throws {
        for writer in writers.values { try writer.sync() }
    }

    /// Closes the late files (after `syncAll`): late events are rare, and keeping their files
    /// open would let closed hours pile up file descriptors.
    func closeLateFiles() throws {
        for (key, writer) in writers where key.late {
            try writer.close()
            writers.removeValue(forKey: key)
        }
        forgetRecent()
    }

    /// Fsyncs and closes every file (the partitions are going away, or the archiver stops).
    func closeAll() throws {
        defer {
            writers.removeAll()
            forgetRecent()
        }
        for writer in writers.values {
            try writer.sync()
            try writer.close()
        }
    }

    /// Closes `hour`: fsyncs and closes its files, then writes its durable closed marker, so
    /// that a marker never promises data that a crash could still take away.
    func closeHour(_ hour: Hour) throws {
        guard case .open(let inherited)? = hours[hour] else { return }
        var written: [String] = []
        for (key, writer) in writers where key.hour == hour && !key.late {
            try writer.sync()
            try writer.close()
            writers.removeValue(forKey: key)
            written.append(writer.path)
        }
        forgetRecent()
        for path in inherited { try Self.sync(path: path) }
        try LogLayout.markClosed(root: root, hour: hour, durable: true)
        hours[hour] = .closed
        compressor?.enqueue(written.sorted())
        // Files of an earlier process: compressed only once untouched for a while, in case
        // another archiver is still appending to one of them.
        let inheritedPlain = inherited.filter { !$0.hasSuffix(".gz") && LogLayout.parse(relativePath: $0)?.late == false }
        compressor?.enqueue(inheritedPlain, quietPeriod: quietPeriod)
    }

    /// Drops the state of closed hours before `hour`: a late event for one of them finds the
    /// marker on disk again.
    func forgetClosedHours(before hour: Hour) {
        for (candidate, state) in hours where candidate < hour {
            if case .closed = state { hours.removeValue(forKey: candidate) }
        }
    }

    // MARK: Internals

    private func isClosed(_ hour: Hour) -> Bool {
        switch hours[hour] {
        case .closed?: return true
        case .open?: return false
        case nil:
            let closed = access(LogLayout.closedMarkerPath(root: root, hour: hour), F_OK) == 0
            hours[hour] = closed ? .closed : .open(inheritedFiles: [])
            return closed
        }
    }

    private func openWriter(_ key: FileKey) throws -> LogWriter {
        let path = LogLayout.hourFilePath(root: root, hour: key.hour, segment: Self.segment(key.partition), late: key.late)
        let writer = try LogWriter(path: path, gzip: false, append: true, bufferSize: bufferSize)
        writers[key] = writer
        return writer
    }

    private func forgetRecent() {
        recentKey = nil
        recentWriter = nil
    }

    static func segment(_ partition: Int32) -> String { "p\(partition)" }

    /// Fsync of a file some earlier process wrote; a file gone meanwhile has nothing to promise.
    private static func sync(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            throw EventLogError.system(path: path, operation: "open", code: errno)
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw EventLogError.system(path: path, operation: "fsync", code: errno) }
    }
}

@available(*, unavailable)
extension ArchiveFiles: Sendable {}
