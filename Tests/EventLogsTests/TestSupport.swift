import EventLogs
import Foundation
import Programs
import Runtime
import Scratch

/// Scratch files for the log tests.
extension TemporaryDirectory {
    /// Writes `contents` at `relativePath` (directories created) and returns the full path.
    @discardableResult
    func write(_ relativePath: String, _ contents: [UInt8]) throws -> String {
        let full = path + "/" + relativePath
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(contents).write(to: URL(fileURLWithPath: full))
        return full
    }

    @discardableResult
    func write(_ relativePath: String, _ text: String) throws -> String {
        try write(relativePath, Array(text.utf8))
    }
}

/// Gzip bytes of `text` made by the system's gzip, independently of LogWriter.
func systemGzip(_ bytes: [UInt8]) throws -> [UInt8] {
    try runFilter("/usr/bin/gzip", ["-c"], input: bytes)
}

func systemGunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    try runFilter("/usr/bin/gzip", ["-dc"], input: bytes)
}

private func runFilter(_ executable: String, _ arguments: [String], input: [UInt8]) throws -> [UInt8] {
    let outcome = try Program.runBlocking(executable, arguments, input: input)
    _ = try outcome.checked(executable, arguments)
    return outcome.output
}

/// One line as the reader delivered it, with its line number.
struct NumberedLine: Equatable, CustomStringConvertible {
    var number: Int
    var bytes: [UInt8]
    var description: String { "\(number): \(String(decoding: bytes, as: UTF8.self).debugDescription)" }
}

enum ChunkCheckError: Error { case chunkNotEndingInNewline }

/// Reads the whole file through `forEachChunk` and splits the chunks into lines (without their
/// `\n`), checking along the way that only the file's last chunk may end without `\n`.
func readLines(_ reader: LogReader) throws -> [NumberedLine] {
    var lines: [NumberedLine] = []
    var previousChunkEndedInNewline = true
    try reader.forEachChunk { chunk, firstLineNumber in
        guard previousChunkEndedInNewline else { throw ChunkCheckError.chunkNotEndingInNewline }
        var number = firstLineNumber
        var start = 0
        for index in 0..<chunk.count where chunk[index] == UInt8(ascii: "\n") {
            lines.append(NumberedLine(number: number, bytes: Array(chunk[start..<index])))
            number += 1
            start = index + 1
        }
        if start < chunk.count {
            lines.append(NumberedLine(number: number, bytes: Array(chunk[start...])))
            previousChunkEndedInNewline = false
        }
    }
    return lines
}

func numbered(_ lines: [String]) -> [NumberedLine] {
    lines.enumerated().map { NumberedLine(number: $0.offset + 1, bytes: Array($0.element.utf8)) }
}
