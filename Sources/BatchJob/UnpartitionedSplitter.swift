import CounterpointCore
import EventLogs

/// Files whose events may belong to any hour are first split by hour into a staging
/// directory, so that the main pass can de-duplicate every hour in one place — exact
/// across files — while holding only one hour's event ids at a time per worker.
///
/// Only valid events of the hours being rebuilt are staged; rejected lines are tallied
/// here (with their original file and line) and events of other hours are counted as
/// outside the range, so the main pass sees each event exactly once.
struct UnpartitionedSplitter {
    let target: Coverage
    let stagingDirectory: String

    func split(_ files: [LogFile], tally: inout GroupTally, progress: (Int64) -> Void) throws -> [String] {
        var writers: [Hour: LogWriter] = [:]
        var paths: [String] = []
        for file in files {
            let reader = try LogReader(file: file)
            var lastReported: Int64 = 0
            try reader.forEachChunk { chunk, firstLineNumber in
                var lineNumber = firstLineNumber
                try LineSplitter.forEachLine(in: chunk) { line in
                    defer { lineNumber += 1 }
                    switch EventParser.parse(line) {
                    case .success(let event):
                        let hour = event.hour
                        guard target.contains(hour) else {
                            tally.eventsRead += 1
                            tally.valid += 1
                            tally.outsideRange += 1
                            return
                        }
                        let writer: LogWriter
                        if let existing = writers[hour] {
                            writer = existing
                        } else {
                            let path = LogLayout.hourFilePath(root: stagingDirectory, hour: hour, segment: "staged",
                                                              late: false, gzip: false)
                            writer = try LogWriter(path: path, gzip: false, append: false)
                            writers[hour] = writer
                            paths.append(path)
                        }
                        try writer.write(line: line)
                    case .failure(let rejection):
                        guard rejection.reason != .empty else { return }
                        tally.eventsRead += 1
                        tally.rejections.record(rejection, source: "\(file.path):\(lineNumber)", payload: line)
                    }
                }
                let read = reader.compressedBytesRead
                progress(read - lastReported)
                lastReported = read
            }
        }
        for writer in writers.values { try writer.close() }
        return paths
    }
}

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
