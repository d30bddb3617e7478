#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends lines to one log file, plain or gzip, through a buffer.
///
/// Durability contract, which the archiver builds on:
/// - `write` only buffers; nothing is promised until `flush`.
/// - `flush` hands everything written so far to the kernel. For gzip it also *ends the current
///   gzip member*, so the file on disk is always complete, valid multi-member gzip at a flush
///   boundary; the next write starts a new member (18 bytes of framing per member, so flush
///   every second or every few MB, not every line).
/// - `sync` flushes and then fsyncs the file (and, the first time, its directory when this
///   writer created the file), after which the data survives a crash.
/// - `fileSize` is the file's size once everything flushed so far is written: after a crash
///   between flushes, truncating the file to the last recorded `fileSize` removes a partial tail.
///
/// Missing parent directories are created. Not thread-safe: one writer per file, one thread at
/// a time.
public final class LogWriter {
    /// The default gzip level. 1 rather than zlib's 6: on NDJSON it costs only a little ratio
    /// and deflates several times faster, and the archiver runs on the ingest path.
    public static let defaultGzipLevel = 1

    public let path: String
    public let isGzip: Bool
    /// The size of the file after everything flushed so far (see the type's contract).
    public private(set) var fileSize: Int64

    private let handle: FileDescriptor
    private let deflater: GzipDeflater?
    private let buffer: UnsafeMutableRawBufferPointer
    private let compressed: UnsafeMutableRawBufferPointer
    private var buffered = 0
    private var memberOpen = false
    private var directoryNeedsSync: Bool
    private var closed = false

    /// Opens `path` for writing, creating it (and its directories) if needed. With `append`, new
    /// lines go after the existing content (for gzip: as new members); otherwise the file is
    /// emptied first. `gzipLevel` is zlib's 0…9.
    public init(path: String, gzip: Bool, append: Bool, gzipLevel: Int = LogWriter.defaultGzipLevel,
                bufferSize: Int = 1 << 20) throws {
        precondition((0...9).contains(gzipLevel) && bufferSize > 0, "invalid gzip level or buffer size")
        self.path = path
        isGzip = gzip
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex {
            try LogLayout.createDirectories(String(path[..<slash]))
        }
        var existing = stat()
        directoryNeedsSync = stat(path, &existing) != 0
        handle = try FileDescriptor(path: path, flags: O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC))
        fileSize = Int64(try handle.status().st_size)
        deflater = gzip ? try GzipDeflater(path: path, level: gzipLevel) : nil
        buffer = .allocate(byteCount: bufferSize, alignment: 64)
        compressed = .allocate(byteCount: gzip ? 256 << 10 : 0, alignment: 64)
        if append && !gzip && fileSize > 0 {
            try terminateLastLine()
        }
    }

    deinit {
        // Best effort: an owner that forgot `close` still gets its lines; errors have nowhere to go.
        if !closed { try? flush() }
        buffer.deallocate()
        compressed.deallocate()
    }

    /// Appends `line` and a `\n`. `line` should not contain `\n` itself.
    public func write(line: UnsafeRawBufferPointer) throws {
        precondition(!closed, "write to a closed LogWriter")
        if line.count < buffer.count - buffered {
            if let source = line.baseAddress {
                buffer.baseAddress!.advanced(by: buffered).copyMemory(from: source, byteCount: line.count)
                buffered += line.count
            }
        } else {
            try append(line)
        }
        if buffered == buffer.count { try drain() }
        buffer[buffered] = UInt8(ascii: "\n")
        buffered += 1
    }

    public func write(line: [UInt8]) throws {
        try line.withUnsafeBytes { try write(line: $0) }
    }

    /// Hands buffered lines to the kernel; for gzip, ends the current member (see the contract).
    public func flush() throws {
        try drain()
        if memberOpen, let deflater {
            try deflater.deflate(UnsafeRawBufferPointer(start: nil, count: 0), finish: true, scratch: compressed) {
                try emit($0)
            }
            memberOpen = false
        }
    }

    /// Flushes, then fsyncs the file so that what was written survives a crash.
    public func sync() throws {
        try flush()
        try handle.sync()
        if directoryNeedsSync {
            try LogLayout.syncDirectory(containing: path)
            directoryNeedsSync = false
        }
    }

    /// Flushes and closes. The writer cannot be used afterwards.
    public func close() throws {
        guard !closed else { return }
        try flush()
        closed = true
        try handle.close()
    }

    // MARK: Internals

    /// Copies a line that does not fit the free space, draining as the buffer fills.
    private func append(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            if buffered == buffer.count { try drain() }
            let step = min(bytes.count - offset, buffer.count - buffered)
            buffer.baseAddress!.advanced(by: buffered).copyMemory(from: bytes.baseAddress! + offset, byteCount: step)
            buffered += step
            offset += step
        }
    }

    /// Sends the buffer to the file (through zlib for gzip).
    private func drain() throws {
        guard buffered > 0 else { return }
        let pending = UnsafeRawBufferPointer(rebasing: buffer[..<buffered])
        if let deflater {
            memberOpen = true
            try deflater.deflate(pending, finish: false, scratch: compressed) { try emit($0) }
        } else {
            try emit(pending)
        }
        buffered = 0
    }

    private func emit(_ bytes: UnsafeRawBufferPointer) throws {
        try handle.writeAll(bytes)
        fileSize += Int64(bytes.count)
    }

    /// A plain file left by a crash may end mid-line; appending to it would glue two events.
    private func terminateLastLine() throws {
        let reader = try FileDescriptor(path: path, flags: O_RDONLY)
        var last: UInt8 = 0
        _ = try reader.read(into: &last, count: 1, at: fileSize - 1)
        if last != UInt8(ascii: "\n") {
            buffer[0] = UInt8(ascii: "\n")
            buffered = 1
            try drain()
        }
    }
}

/// One writer belongs to one task at a time: it owns a buffer, a zlib stream and the file's tail.
@available(*, unavailable)
extension LogWriter: Sendable {}
