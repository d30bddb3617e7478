import CZlib

/// gzip framing for zlib: 15 window bits plus 16 selects a gzip header and trailer.
private let gzipWindowBits: Int32 = 15 + 16

/// Turns a zlib status into this module's error, with zlib's own message. Data errors become
/// `corruptGzip` at `offset`; anything else (memory, version) is `EventLogError.zlib`.
private func zlibError(_ status: Int32, stream: UnsafePointer<z_stream>, path: String,
                       operation: String, offset: Int64) -> EventLogError {
    let message = stream.pointee.msg.map { String(cString: $0) } ?? String(cString: zError(status))
    switch status {
    case Z_DATA_ERROR, Z_NEED_DICT:
        return .corruptGzip(path: path, offset: offset, reason: message)
    default:
        return .zlib(path: path, operation: operation, code: status, message: message)
    }
}

/// A new z_stream, started by `start` (`inflateInit2` or `deflateInit2`); freed again, and the
/// failure thrown, when that fails.
private func startedStream(path: String, operation: String,
                           _ start: (UnsafeMutablePointer<z_stream>) -> Int32) throws -> UnsafeMutablePointer<z_stream> {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let status = start(stream)
    guard status == Z_OK else {
        let error = zlibError(status, stream: stream, path: path, operation: operation, offset: 0)
        stream.deallocate()
        throw error
    }
    return stream
}

/// Owns one zlib inflate stream reading gzip members.
final class GzipInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let path: String

    init(path: String) throws {
        self.path = path
        stream = try startedStream(path: path, operation: "start inflating") { cp_inflateInit2($0, gzipWindowBits) }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Prepares for the next member of a multi-member file.
    func reset() throws {
        let status = inflateReset(stream)
        guard status == Z_OK else {
            throw zlibError(status, stream: stream, path: path, operation: "reset inflating", offset: 0)
        }
    }

    /// Decompresses from `input` into `output` until either is used up or the member ends.
    /// `inputOffset` is the file offset of `input`'s first byte, for error messages.
    func inflate(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer,
                 inputOffset: Int64) throws -> (consumed: Int, produced: Int, memberEnded: Bool) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        let status = CZlib.inflate(stream, Z_NO_FLUSH)
        let consumed = input.count - Int(stream.pointee.avail_in)
        let produced = output.count - Int(stream.pointee.avail_out)
        switch status {
        case Z_OK:
            return (consumed, produced, false)
        case Z_BUF_ERROR where consumed > 0 || produced > 0:
            return (consumed, produced, false)
        case Z_STREAM_END:
            return (consumed, produced, true)
        default:
            throw zlibError(status == Z_BUF_ERROR ? Z_DATA_ERROR : status, stream: stream, path: path,
                            operation: "inflate", offset: inputOffset + Int64(consumed))
        }
    }
}

/// Owns one zlib deflate stream writing gzip members.
final class GzipDeflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let path: String

    init(path: String, level: Int) throws {
        self.path = path
        stream = try startedStream(path: path, operation: "start deflating") {
            cp_deflateInit2($0, Int32(level), gzipWindowBits, 8)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Compresses all of `input`, handing compressed output to `emit` in pieces of at most
    /// `scratch.count` bytes. With `finish`, the member is ended (trailer written) and the
    /// stream reset so that the next call starts a new member.
    func deflate(_ input: UnsafeRawBufferPointer, finish: Bool, scratch: UnsafeMutableRawBufferPointer,
                 emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        while true {
            stream.pointee.next_out = scratch.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(scratch.count)
            let status = CZlib.deflate(stream, finish ? Z_FINISH : Z_NO_FLUSH)
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                throw zlibError(status, stream: stream, path: path, operation: "deflate", offset: 0)
            }
            let produced = scratch.count - Int(stream.pointee.avail_out)
            if produced > 0 { try emit(UnsafeRawBufferPointer(rebasing: scratch[..<produced])) }
            if status == Z_STREAM_END {
                let reset = deflateReset(stream)
                guard reset == Z_OK else {
                    throw zlibError(reset, stream: stream, path: path, operation: "reset deflating", offset: 0)
                }
                return
            }
            // Without finish, the input is all taken once zlib leaves output space unused.
            if !finish && stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { return }
        }
    }
}
