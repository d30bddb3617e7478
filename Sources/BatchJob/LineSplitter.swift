import Foundation

/// Splits a buffer of whole lines (as `LogReader` delivers them) at `\n`, dropping a `\r`
/// before it.
enum LineSplitter {
    @inline(__always)
    static func forEachLine(in chunk: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard let base = chunk.baseAddress else { return }
        var start = 0
        let end = chunk.count
        while start < end {
            let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), end - start)
            let lineEnd = newline.map { UnsafeRawPointer($0) - base } ?? end
            var contentEnd = lineEnd
            if contentEnd > start, base.load(fromByteOffset: contentEnd - 1, as: UInt8.self) == UInt8(ascii: "\r") {
                contentEnd -= 1
            }
            try body(UnsafeRawBufferPointer(start: base + start, count: contentEnd - start))
            start = lineEnd + 1
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
