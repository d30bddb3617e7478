#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams the lines of one log file, plain or gzip (also multi-member gzip, as produced by
/// concatenating files or by `LogWriter.flush`), in bounded memory.
///
/// Chunk contract of `forEachChunk`:
/// - Every buffer holds whole lines only, each ending in `\n`, except that the file's last line
///   may lack it. Line ends are not touched: a `\r` before `\n` is the caller's to strip, and
///   empty lines are delivered as they are.
/// - `firstLineNumber` is the 1-based number of the buffer's first line in the file; every line
///   counts, including empty and truncated ones, so callers can name `file:line` exactly.
/// - A line longer than `maxLineBytes` is always delivered truncated to its first `maxLineBytes`
///   bytes followed by `\n`, in a buffer of its own; the rest of it is skipped. Because the default
///   limit (1 MiB) is above `EventLimits.maxEventBytes`, the caller's size check rejects such a
///   line as `too_large` without the reader ever holding it whole.
/// - The buffer is only valid during the call: it is reused for the next chunk.
///
/// Memory is `chunkSize + maxLineBytes` for the lines (plus up to 1 MiB of compressed input for
/// gzip), whatever the file size. Plain files are read with `pread` into that one buffer, and the
/// only per-line work is finding line ends (`memchr`) to number lines and bound their length.
public final class LogReader {
    /// Lines longer than this are delivered cut to it (see the chunk contract above).
    public static let defaultMaxLineBytes = 1 << 20

    public let file: LogFile
    public let chunkSize: Int
    public let maxLineBytes: Int

    /// Bytes read from the file so far (compressed bytes for gzip), for progress; updated before
    /// each call of the `forEachChunk` body.
    public private(set) var compressedBytesRead: Int64 = 0

    private let handle: FileDescriptor
    private let lines: UnsafeMutableRawBufferPointer
    private let inflater: GzipInflater?
    private let compressedInput: UnsafeMutableRawBufferPointer

    /// Opens `file` (or its compressed twin, see `open`). `chunkSize` is how much is read (or
    /// inflated) per step; `maxLineBytes` the longest line delivered whole (see the type's contract).
    public init(file: LogFile, chunkSize: Int = 4 << 20, maxLineBytes: Int = LogReader.defaultMaxLineBytes) throws {
        precondition(chunkSize > 0 && maxLineBytes > 0, "chunk and line limits must be positive")
        (self.file, handle) = try Self.open(file)
        self.chunkSize = chunkSize
        self.maxLineBytes = maxLineBytes
        let file = self.file
        #if os(Linux)
        _ = posix_fadvise(handle.rawValue, 0, 0, POSIX_FADV_SEQUENTIAL)
        #endif
        inflater = file.isGzip ? try GzipInflater(path: file.path) : nil
        // Room for the longest partial line carried over plus one full chunk plus the `\n` that
        // terminates a truncated line.
        lines = .allocate(byteCount: chunkSize + maxLineBytes + 1, alignment: 64)
        compressedInput = .allocate(byteCount: file.isGzip ? min(chunkSize, 1 << 20) : 0, alignment: 64)
    }

    /// Convenience for a path: inspects the file first (`LogFile(path:)`).
    public convenience init(path: String, chunkSize: Int = 4 << 20, maxLineBytes: Int = LogReader.defaultMaxLineBytes) throws {
        try self.init(file: LogFile(path: path), chunkSize: chunkSize, maxLineBytes: maxLineBytes)
    }

    /// Opens `file`; a plain file that is gone but has its `.gz` beside it is read from that:
    /// the archiver compressed it since it was found (a batch beside `run`'s archiver), and it
    /// deletes a plain file only once the `.gz` holds the same events, complete and durable
    /// (`LogDiscovery.withoutCompressedTwins`).
    private static func open(_ file: LogFile) throws -> (LogFile, FileDescriptor) {
        do {
            return (file, try FileDescriptor(path: file.path, flags: O_RDONLY))
        } catch let error as EventLogError {
            guard case .system(_, _, let code) = error, code == ENOENT, !file.isGzip,
                  var twin = try? LogFile(path: file.path + ".gz"), twin.isGzip else { throw error }
            (twin.hour, twin.isLate) = (file.hour, file.isLate)
            return (twin, try FileDescriptor(path: twin.path, flags: O_RDONLY))
        }
    }

    deinit {
        lines.deallocate()
        compressedInput.deallocate()
    }

    /// Calls `body` with successive buffers of whole lines from the start of the file (each call
    /// reads the file anew); see the type's documentation for the exact contract.
    public func forEachChunk(_ body: (UnsafeRawBufferPointer, _ firstLineNumber: Int) throws -> Void) throws {
        var source = try makeSource()
        let base = lines.baseAddress!
        let newline = Int32(UInt8(ascii: "\n"))
        var used = 0                // bytes in `lines`: the carried partial line, then new data
        var lineNumber = 1          // number of the line starting at `base`
        var skippingLongLine = false

        while true {
            let got = try source.fill(base + used, chunkSize, reader: self)
            compressedBytesRead = source.fileOffset
            if got == 0 {
                if used > 0 { try body(UnsafeRawBufferPointer(start: base, count: used), lineNumber) }
                return
            }
            var start = 0
            if skippingLongLine {
                // `used` is 0 here: resume at the line after the overlong one.
                guard let end = memchr(base, newline, got) else { continue }
                start = base.distance(to: end) + 1
                skippingLongLine = false
            }
            used += got
            if let last = Self.lastNewline(in: UnsafeRawBufferPointer(start: base + start, count: used - start)) {
                let end = start + last + 1
                lineNumber = try deliver(UnsafeMutableRawBufferPointer(start: base + start, count: end - start),
                                         firstLineNumber: lineNumber, to: body)
                start = end
            }
            used -= start
            if start > 0 && used > 0 { memmove(base, base + start, used) }
            if used >= maxLineBytes {
                base.storeBytes(of: UInt8(ascii: "\n"), toByteOffset: maxLineBytes, as: UInt8.self)
                try body(UnsafeRawBufferPointer(start: base, count: maxLineBytes + 1), lineNumber)
                lineNumber += 1
                used = 0
                skippingLongLine = true
            }
        }
    }

    /// Hands `region` (whole lines, ending in `\n`) to `body`, cutting out lines longer than
    /// `maxLineBytes` to deliver them truncated on their own; returns the next line number.
    /// Finding each line end is the one per-line step, and it is needed for the count anyway.
    private func deliver(_ region: UnsafeMutableRawBufferPointer, firstLineNumber: Int,
                         to body: (UnsafeRawBufferPointer, Int) throws -> Void) throws -> Int {
        let base = region.baseAddress!
        let end = base + region.count
        var pendingStart = base, pendingLineNumber = firstLineNumber
        var lineStart = base, lineNumber = firstLineNumber
        while lineStart < end {
            let lineEnd = memchr(lineStart, Int32(UInt8(ascii: "\n")), lineStart.distance(to: end))!
                .assumingMemoryBound(to: UInt8.self)
            if lineStart.distance(to: UnsafeMutableRawPointer(lineEnd)) > maxLineBytes {
                if pendingStart < lineStart {
                    try body(UnsafeRawBufferPointer(start: pendingStart, count: pendingStart.distance(to: lineStart)),
                             pendingLineNumber)
                }
                lineStart.storeBytes(of: UInt8(ascii: "\n"), toByteOffset: maxLineBytes, as: UInt8.self)
                try body(UnsafeRawBufferPointer(start: lineStart, count: maxLineBytes + 1), lineNumber)
                pendingStart = UnsafeMutableRawPointer(lineEnd) + 1
                pendingLineNumber = lineNumber + 1
            }
            lineStart = UnsafeMutableRawPointer(lineEnd) + 1
            lineNumber += 1
        }
        if pendingStart < end {
            try body(UnsafeRawBufferPointer(start: pendingStart, count: pendingStart.distance(to: end)), pendingLineNumber)
        }
        return lineNumber
    }

    /// The offset of the last `\n` (memrchr is a GNU extension; lines are short, so the
    /// backward scan usually stops within a few hundred bytes).
    static func lastNewline(in bytes: UnsafeRawBufferPointer) -> Int? {
        var index = bytes.count
        while index > 0 {
            index -= 1
            if bytes[index] == UInt8(ascii: "\n") { return index }
        }
        return nil
    }

    // MARK: Sources of bytes

    private func makeSource() throws -> Source {
        if let inflater {
            try inflater.reset()
            return .gzip(GzipState())
        }
        return .plain(fileOffset: 0)
    }

    private struct GzipState {
        var fileOffset: Int64 = 0
        var inputStart = 0
        var inputEnd = 0
        var insideMember = false
    }

    /// Where `forEachChunk` gets bytes from: the file itself, or zlib inflating it.
    private enum Source {
        case plain(fileOffset: Int64)
        case gzip(GzipState)

        var fileOffset: Int64 {
            switch self {
            case let .plain(offset): offset
            case let .gzip(state): state.fileOffset
            }
        }

        /// Puts up to `capacity` bytes at `destination`; 0 only at the end of the file.
        mutating func fill(_ destination: UnsafeMutableRawPointer, _ capacity: Int, reader: LogReader) throws -> Int {
            switch self {
            case let .plain(offset):
                let got = try reader.handle.read(into: destination, count: capacity, at: offset)
                self = .plain(fileOffset: offset + Int64(got))
                return got
            case var .gzip(state):
                defer { self = .gzip(state) }
                return try reader.inflate(into: destination, capacity: capacity, state: &state)
            }
        }
    }

    private func inflate(into destination: UnsafeMutableRawPointer, capacity: Int,
                         state: inout GzipState) throws -> Int {
        guard let inflater else { return 0 }
        var produced = 0
        while produced < capacity {
            if state.inputStart == state.inputEnd {
                let got = try handle.read(into: compressedInput.baseAddress!, count: compressedInput.count,
                                          at: state.fileOffset)
                if got == 0 {
                    if state.insideMember { throw EventLogError.truncatedGzip(path: file.path, offset: state.fileOffset) }
                    break
                }
                state.fileOffset += Int64(got)
                state.inputStart = 0
                state.inputEnd = got
            }
            state.insideMember = true
            let pending = state.inputEnd - state.inputStart
            let step = try inflater.inflate(
                input: UnsafeRawBufferPointer(rebasing: compressedInput[state.inputStart..<state.inputEnd]),
                output: UnsafeMutableRawBufferPointer(start: destination + produced, count: capacity - produced),
                inputOffset: state.fileOffset - Int64(pending))
            state.inputStart += step.consumed
            produced += step.produced
            if step.memberEnded {
                state.insideMember = false
                try inflater.reset()
            }
        }
        return produced
    }
}

/// One reader belongs to one task at a time: it owns a file position, a zlib stream and a buffer.
@available(*, unavailable)
extension LogReader: Sendable {}
