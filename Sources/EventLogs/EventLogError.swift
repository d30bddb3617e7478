#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything that can go wrong while finding, reading or writing event logs.
///
/// Every message is one line that names the file, so that `batch` can print it as its exit
/// error and an operator knows which file to look at.
public enum EventLogError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A system call failed; `code` is the `errno` it left.
    case system(path: String, operation: String, code: Int32)
    /// A path given as a log is neither a regular file nor a directory (a FIFO, a socket, a device).
    case notALogFile(path: String)
    /// The gzip data cannot be decoded; `offset` is the compressed byte offset where zlib gave up.
    case corruptGzip(path: String, offset: Int64, reason: String)
    /// The file ends inside a gzip member, as an interrupted write leaves it.
    case truncatedGzip(path: String, offset: Int64)
    /// zlib failed for a reason that is not the data's fault (memory, version mismatch).
    case zlib(path: String, operation: String, code: Int32, message: String)

    public var description: String {
        switch self {
        case let .system(path, operation, code) where code == ENOSPC || code == EDQUOT:
            // Worded as every component names a full disk (Runtime's `FreeSpace.cause`).
            let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            return "cannot \(operation) \(path): no free space on \(directory.isEmpty ? "/" : directory) (\(String(cString: strerror(code))))"
        case let .system(path, operation, code):
            return "cannot \(operation) \(path): \(String(cString: strerror(code)))"
        case let .notALogFile(path):
            return "cannot read \(path): not a regular file or a directory"
        case let .corruptGzip(path, offset, reason):
            return "corrupt gzip data in \(path) at compressed byte \(offset): \(reason)"
        case let .truncatedGzip(path, offset):
            return "truncated gzip data in \(path): the file ends at byte \(offset) inside a gzip member"
        case let .zlib(path, operation, code, message):
            return "zlib failed to \(operation) for \(path): \(message) (status \(code))"
        }
    }
}

/// Runs a system call that returns -1 and sets `errno` on failure, retrying on `EINTR`, and turns
/// a failure into `EventLogError.system` naming the path and what was being done.
@inline(__always)
func systemCall<Result: BinaryInteger>(
    _ operation: @autoclosure () -> String, path: String, _ call: () -> Result
) throws -> Result {
    while true {
        let result = call()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw EventLogError.system(path: path, operation: operation(), code: code)
    }
}

/// An open file descriptor, closed when the owner goes away.
final class FileDescriptor {
    private(set) var rawValue: Int32
    let path: String

    init(path: String, flags: Int32, mode: mode_t = 0o644, operation: String = "open") throws {
        self.path = path
        rawValue = try systemCall(operation, path: path) { open(path, flags | O_CLOEXEC, mode) }
    }

    deinit {
        if rawValue >= 0 { _ = closeDescriptor(rawValue) }
    }

    /// Closes now, reporting the error some file systems only give at close.
    func close() throws {
        guard rawValue >= 0 else { return }
        let descriptor = rawValue
        rawValue = -1
        // Not retried on EINTR: on Linux the descriptor is released even then.
        if closeDescriptor(descriptor) != 0 {
            throw EventLogError.system(path: path, operation: "close", code: errno)
        }
    }

    func status() throws -> stat {
        var info = stat()
        _ = try systemCall("stat", path: path) { fstat(rawValue, &info) }
        return info
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws -> Int {
        var total = 0
        while total < count {
            let got = try systemCall("read", path: path) {
                pread(rawValue, buffer + total, count - total, off_t(offset) + off_t(total))
            }
            if got == 0 { break }
            total += got
        }
        return total
    }

    func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        guard var next = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = try systemCall("write", path: path) { write(rawValue, next, remaining) }
            next += written
            remaining -= written
        }
    }

    func sync() throws {
        _ = try systemCall("fsync", path: path) { fsync(rawValue) }
    }
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }
