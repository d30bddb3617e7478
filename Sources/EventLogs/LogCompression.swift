#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Compressing finished log files in place (`X` → `X.gz`), crash-safely, and cleaning up
/// after a crash in the middle of it.
///
/// The order of `compress` is what makes a crash harmless at every step: the gzip is written
/// under a temporary name, fsynced, renamed to `X.gz`, the directory fsynced, and only then
/// is `X` deleted. So `X` holds the events until a complete `X.gz` is durable; a `.gz.tmp`
/// is never read (discovery ignores the name); and an `X` beside an `X.gz` is a leftover that
/// `LogDiscovery` reads once (the `.gz`) and `recover` deletes.
public enum LogCompression {
    /// The name a gzip has while it is being written.
    public static let temporarySuffix = ".gz.tmp"

    public struct Compressed: Sendable, Hashable {
        public var path: String
        public var plainBytes: Int64
        public var gzipBytes: Int64
    }

    /// Compresses the finished file `path` into `path.gz` and deletes `path`. The file must not
    /// be written meanwhile. A failure leaves `path` as it was (and no `.gz`).
    @discardableResult
    public static func compress(path: String, level: Int = LogWriter.defaultGzipLevel) throws -> Compressed {
        let target = path + ".gz"
        let temporary = path + temporarySuffix
        do {
            let source = try FileDescriptor(path: path, flags: O_RDONLY)
            let output = try FileDescriptor(path: temporary, flags: O_WRONLY | O_CREAT | O_TRUNC, operation: "create")
            let deflater = try GzipDeflater(path: temporary, level: level)
            let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 64)
            defer {
                input.deallocate()
                scratch.deallocate()
            }
            var offset: Int64 = 0
            var written: Int64 = 0
            let emit: (UnsafeRawBufferPointer) throws -> Void = { bytes in
                try output.writeAll(bytes)
                written += Int64(bytes.count)
            }
            while true {
                let got = try source.read(into: input.baseAddress!, count: input.count, at: offset)
                if got == 0 { break }
                offset += Int64(got)
                try deflater.deflate(UnsafeRawBufferPointer(rebasing: input[..<got]), finish: false, scratch: scratch, emit: emit)
            }
            try deflater.deflate(UnsafeRawBufferPointer(start: nil, count: 0), finish: true, scratch: scratch, emit: emit)
            try output.sync()
            try output.close()
            _ = try systemCall("rename", path: temporary) { rename(temporary, target) }
            try LogLayout.syncDirectory(containing: target)
            _ = try systemCall("delete", path: path) { unlink(path) }
            return Compressed(path: target, plainBytes: offset, gzipBytes: written)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// What `recover` did.
    public struct Recovery: Sendable, Hashable {
        /// Half-written gzips deleted.
        public var removedTemporaries: [String] = []
        /// Plain files deleted because their complete `.gz` was there.
        public var removedPlain: [String] = []
        /// Plain files compressed again because their `.gz` was not a complete copy.
        public var recompressed: [String] = []

        public init() {}
    }

    /// Cleans up after a crash in `compress` in the day directories of the log root `root`:
    /// deletes `*.gz.tmp`; for each `X` beside an `X.gz`, deletes `X` when `X.gz` inflates
    /// completely to exactly `X`'s size, and otherwise (unsure) deletes `X.gz` and compresses
    /// `X` again.
    public static func recover(root: String) throws -> Recovery {
        var recovery = Recovery()
        for day in try entries(of: root) {
            let directory = LogLayout.join(root, day)
            guard isDirectory(directory) else { continue }
            let names = try entries(of: directory)
            let present = Set(names)
            for name in names {
                let path = LogLayout.join(directory, name)
                if name.hasSuffix(temporarySuffix) {
                    unlink(path)
                    recovery.removedTemporaries.append(path)
                } else if !name.hasSuffix(".gz"), present.contains(name + ".gz") {
                    if isCompleteCopy(gzip: path + ".gz", of: path) {
                        _ = try systemCall("delete", path: path) { unlink(path) }
                        recovery.removedPlain.append(path)
                    } else {
                        _ = try systemCall("delete", path: path + ".gz") { unlink(path + ".gz") }
                        try compress(path: path)
                        recovery.recompressed.append(path)
                    }
                }
            }
        }
        return recovery
    }

    /// Whether `gzip` inflates without error to as many bytes as `plain` holds. (Lines longer
    /// than `LogReader`'s limit are delivered truncated, so such a file counts as unsure and is
    /// compressed again: never wrong, only slower.)
    static func isCompleteCopy(gzip: String, of plain: String) -> Bool {
        var info = stat()
        guard stat(plain, &info) == 0 else { return false }
        do {
            let reader = try LogReader(path: gzip)
            guard reader.file.isGzip else { return false }
            var total: Int64 = 0
            try reader.forEachChunk { chunk, _ in total += Int64(chunk.count) }
            return total == Int64(info.st_size)
        } catch {
            return false
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Names in `directory`, sorted, without `.` and `..`; a missing directory has none.
    private static func entries(of directory: String) throws -> [String] {
        guard let handle = opendir(directory) else {
            if errno == ENOENT { return [] }
            throw EventLogError.system(path: directory, operation: "read directory", code: errno)
        }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
