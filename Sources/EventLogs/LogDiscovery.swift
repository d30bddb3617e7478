#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CounterpointCore

/// One event-log file found on disk.
public struct LogFile: Sendable, Hashable {
    public var path: String
    /// The UTC hour every event of the file belongs to; `nil` for an unpartitioned log.
    public var hour: Hour?
    /// Whether the file holds events that arrived after its hour was closed (`<HH>.late…`).
    public var isLate: Bool
    /// Decided by the magic bytes `1f 8b`, not by the name.
    public var isGzip: Bool
    /// Size on disk (compressed size for gzip), for progress.
    public var size: Int64
    /// Last modification, nanoseconds since 1970, and the inode: with the path and the size,
    /// what tells the incremental batch that a file changed (grew, or was replaced).
    public var modifiedNanoseconds: Int64
    public var inode: UInt64

    public init(path: String, hour: Hour?, isLate: Bool, isGzip: Bool, size: Int64,
                modifiedNanoseconds: Int64 = 0, inode: UInt64 = 0) {
        self.path = path
        self.hour = hour
        self.isLate = isLate
        self.isGzip = isGzip
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.inode = inode
    }

    /// Inspects the file at `path`: its size, its compression, and its hour when the path follows
    /// `LogLayout`. Throws when it cannot be opened for reading or is not a regular file.
    ///
    /// A file found by `LogDiscovery.inventory(of:openingFiles: false)` was only `stat`ed: this is
    /// what opens it before it is read.
    public init(path: String) throws {
        let handle = try FileDescriptor(path: path, flags: O_RDONLY | O_NONBLOCK)
        let info = try handle.status()
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw EventLogError.notALogFile(path: path) }
        var magic: (UInt8, UInt8) = (0, 0)
        let got = try withUnsafeMutableBytes(of: &magic) { try handle.read(into: $0.baseAddress!, count: 2, at: 0) }
        let parsed = LogLayout.parse(relativePath: path)
        self.init(path: path, hour: parsed?.hour, isLate: parsed?.late ?? false,
                  isGzip: got == 2 && magic == (0x1F, 0x8B), size: Int64(info.st_size),
                  modifiedNanoseconds: Self.modificationTime(info),
                  inode: UInt64(info.st_ino))
    }

    /// This file, opened (`init(path:)`): what a caller of `LogDiscovery.inventory(of:openingFiles:
    /// false)` does before reading it. A plain file gone since it was found, with a gzip `.gz`
    /// beside it, is that `.gz`: the archiver compressed it meanwhile (as `LogReader` does).
    public func opened() throws -> LogFile {
        do {
            return try LogFile(path: path)
        } catch let error as EventLogError {
            guard case .system(_, _, let code) = error, code == ENOENT, !path.hasSuffix(".gz"),
                  var twin = try? LogFile(path: path + ".gz"), twin.isGzip else { throw error }
            (twin.hour, twin.isLate) = (hour, isLate)
            return twin
        }
    }

    /// A regular file known by its `stat` alone, not opened: `isGzip` is guessed from the name
    /// (`.gz`) until `LogFile(path:)` reads its magic bytes.
    init(path: String, statted info: stat, entry: LogLayout.Entry?) {
        var parsed: (hour: Hour, late: Bool)?
        if case let .hourFile(hour, late, _)? = entry { parsed = (hour, late) }
        self.init(path: path, hour: parsed?.hour, isLate: parsed?.late ?? false,
                  isGzip: path.utf8.reversed().starts(with: ".gz".utf8.reversed()), size: Int64(info.st_size),
                  modifiedNanoseconds: Self.modificationTime(info), inode: UInt64(info.st_ino))
    }
}

extension LogFile {
    static func modificationTime(_ info: stat) -> Int64 {
        #if canImport(Darwin)
        Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
        Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
    }
}

/// The logs found under a set of paths.
public struct LogInventory: Sendable {
    /// Every log file, sorted by path (byte order), each file once even if named twice.
    public var files: [LogFile]
    /// Hours with a closed marker, ascending.
    public var closedHours: [Hour]
    /// The sum of the files' sizes.
    public var totalBytes: Int64

    public init(files: [LogFile], closedHours: [Hour]) {
        self.files = files
        self.closedHours = closedHours
        self.totalBytes = files.reduce(0) { $0 + $1.size }
    }

    public func isClosed(_ hour: Hour) -> Bool {
        var low = 0, high = closedHours.count
        while low < high {
            let middle = (low + high) / 2
            if closedHours[middle] < hour { low = middle + 1 } else { high = middle }
        }
        return low < closedHours.count && closedHours[low] == hour
    }
}

/// Finds event logs in files and directories.
public enum LogDiscovery {
    /// The logs under `paths`: each path is a file (taken whatever its name) or a directory
    /// (searched recursively for layout files, closed markers and files with a log extension;
    /// names starting with `.` are skipped, so writers may keep temporary files there).
    ///
    /// With `openingFiles` (the default) every log file is opened once to check it is readable
    /// and to sniff gzip, so that an unreadable input fails the run before anything is applied.
    /// Without it, files are only `stat`ed (size, modification time, inode: all a fingerprint of
    /// them needs) and `isGzip` is the name's guess: the caller opens what it reads with
    /// `LogFile(path:)` before applying anything (`batch`, whose default run reads only the hours
    /// that changed: opening the 8,760 files of a year's history on every run cost more than
    /// finding them). Files named `X` and `X.gz` are still told apart by `X.gz`'s magic bytes.
    /// A missing path, or one that cannot be `stat`ed or opened, throws an `EventLogError`
    /// naming it.
    public static func inventory(of paths: [String], openingFiles: Bool = true) throws -> LogInventory {
        var walk = Walk(openingFiles: openingFiles)
        for path in paths { try walk.visit(path: path, named: true) }
        var files = walk.files.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        if !openingFiles { try openTwins(&files) }
        return LogInventory(files: withoutCompressedTwins(files), closedHours: walk.closedHours.sorted())
    }

    /// Opens the `.gz` files found beside their uncompressed twin, so that `withoutCompressedTwins`
    /// decides by their magic bytes, as when every file is opened.
    private static func openTwins(_ files: inout [LogFile]) throws {
        let named = files.indices.filter { files[$0].isGzip }
        guard !named.isEmpty else { return }
        let paths = Set(files.lazy.map(\.path))
        for index in named where paths.contains(String(files[index].path.dropLast(3))) {
            files[index] = try LogFile(path: files[index].path)
        }
    }

    /// Drops `X` when `X.gz` is there too. The archiver compresses a closed hour's file `X`
    /// into `X.gz` and renames it into place only once it is complete and fsynced, then deletes
    /// `X`; a crash between the rename and the delete leaves both, with the same events.
    /// De-duplication by `event_id` would keep the counts right, but the hour would be read
    /// twice and report every event of `X` as a duplicate, so the complete `.gz` alone is read
    /// (and the pair fingerprints like the `.gz` alone, so the archiver deleting `X` later
    /// does not make the hour look changed).
    static func withoutCompressedTwins(_ files: [LogFile]) -> [LogFile] {
        let paths = Set(files.lazy.filter(\.isGzip).map(\.path))
        guard !paths.isEmpty else { return files }
        return files.filter { !paths.contains($0.path + ".gz") }
    }

    private struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    private struct Walk {
        let openingFiles: Bool
        var files: [LogFile] = []
        var closedHours = Set<Hour>()
        var seen = Set<FileIdentity>()
        /// What `closedHours` and `seen` gained, in order, so that a directory listed again
        /// (`visitDirectory`) takes back what its failed pass added without a copy of the walk
        /// (a copy per directory costs directories × files: 366 × 17,520 for a year of hours).
        private var closedAdded: [Hour] = []
        private var seenAdded: [FileIdentity] = []

        init(openingFiles: Bool) {
            self.openingFiles = openingFiles
        }

        private mutating func insertSeen(_ identity: FileIdentity) -> Bool {
            guard seen.insert(identity).inserted else { return false }
            seenAdded.append(identity)
            return true
        }

        /// `named` is true for paths the user gave: those are taken whatever their name.
        /// `entry`: the path's `LogLayout.classify`, when the caller has it already.
        mutating func visit(path: String, named: Bool, entry known: LogLayout.Entry?? = nil) throws {
            var info = stat()
            _ = try systemCall("read", path: path) { stat(path, &info) }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                // Identity also stops cycles through symbolic links.
                guard insertSeen(FileIdentity(info)) else { return }
                try visitDirectory(path)
            case S_IFREG:
                let entry = known ?? LogLayout.classify(path: path)
                if case let .closedMarker(hour)? = entry {
                    if closedHours.insert(hour).inserted { closedAdded.append(hour) }
                } else if named || entry != nil || LogLayout.hasLogExtension(path) {
                    guard insertSeen(FileIdentity(info)) else { return }
                    files.append(openingFiles ? try LogFile(path: path) : LogFile(path: path, statted: info, entry: entry))
                }
            default:
                if named { throw EventLogError.notALogFile(path: path) }
            }
        }

        /// Lists `path` and visits its entries. A file that vanishes between the listing and its
        /// visit was renamed or deleted meanwhile — the archiver replaces `X` by `X.gz` (renamed
        /// into place before `X` is deleted) — so the directory is listed again, from the same
        /// state, to find what replaced it. Every pass that finds such a change has seen one
        /// more rename go through, so a few passes suffice.
        private mutating func visitDirectory(_ path: String) throws {
            let before = (files: files.count, closed: closedAdded.count, seen: seenAdded.count)
            for attempt in 1... {
                do {
                    try visitDirectoryOnce(path)
                    return
                } catch EventLogError.system(_, _, ENOENT) where attempt < 8 {
                    files.removeSubrange(before.files...)
                    for hour in closedAdded[before.closed...] { closedHours.remove(hour) }
                    closedAdded.removeSubrange(before.closed...)
                    for identity in seenAdded[before.seen...] { seen.remove(identity) }
                    seenAdded.removeSubrange(before.seen...)
                }
            }
        }

        private mutating func visitDirectoryOnce(_ path: String) throws {
            guard let directory = opendir(path) else {
                throw EventLogError.system(path: path, operation: "read directory", code: errno)
            }
            defer { closedir(directory) }
            var names: [(name: String, type: UInt8)] = []
            while true {
                errno = 0
                guard let entry = readdir(directory) else {
                    if errno != 0 { throw EventLogError.system(path: path, operation: "read directory", code: errno) }
                    break
                }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if !name.hasPrefix(".") { names.append((name, UInt8(entry.pointee.d_type))) }
            }
            for (name, type) in names.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
                let child = LogLayout.join(path, name)
                // A marker the listing says is a regular file needs no `stat` (one per hour of
                // the history); a link or a file system without entry types takes the way below.
                let entry = LogLayout.classify(path: child)
                if type == UInt8(DT_REG), case let .closedMarker(hour)? = entry {
                    if closedHours.insert(hour).inserted { closedAdded.append(hour) }
                    continue
                }
                // Entries that cannot be logs are only checked for being directories, and a failure
                // there (a file vanishing, a dangling link among unrelated files) is not an error.
                if entry != nil || LogLayout.hasLogExtension(name) {
                    try visit(path: child, named: false, entry: .some(entry))
                } else {
                    var info = stat()
                    if stat(child, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                        try visit(path: child, named: false)
                    }
                }
            }
        }
    }
}
