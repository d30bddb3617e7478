import Foundation
import Patience

/// The `counterpoint` executable under test: `COUNTERPOINT_BINARY` when set, else the one
/// SwiftPM built beside this test bundle, else the package's `.build/debug`.
enum Executable {
    static let path: String = {
        if let override = ProcessInfo.processInfo.environment["COUNTERPOINT_BINARY"], !override.isEmpty {
            return override
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates: [String?] = [
            Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("counterpoint").path,
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("counterpoint").path,
            packageRoot.appendingPathComponent(".build/debug/counterpoint").path,
        ]
        let paths = candidates.compactMap { $0 }
        return paths.first { FileManager.default.isExecutableFile(atPath: $0) } ?? paths.last!
    }()
}

struct CommandError: Error, CustomStringConvertible {
    var description: String
}

/// One `counterpoint` process with its stdout and stderr in files (a chatty child never blocks on a pipe).
final class CounterpointProcess {
    let arguments: [String]
    private let process = Process()
    private let stdoutURL: URL
    private let stderrURL: URL

    init(_ arguments: [String], scratch: URL) throws {
        self.arguments = arguments
        let name = "replay-\(UUID().uuidString.prefix(8))"
        stdoutURL = scratch.appendingPathComponent("\(name).stdout")
        stderrURL = scratch.appendingPathComponent("\(name).stderr")
        guard FileManager.default.createFile(atPath: stdoutURL.path, contents: nil),
              FileManager.default.createFile(atPath: stderrURL.path, contents: nil) else {
            throw CommandError(description: "cannot create output files in \(scratch.path)")
        }
        process.executableURL = URL(fileURLWithPath: Executable.path)
        process.arguments = arguments
        // Without the developer's COUNTERPOINT_* settings, so that defaults mean what the test expects.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTERPOINT_") }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()
    }

    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the exit status; kills the process and throws if it runs past `timeout`.
    func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        guard try await eventually(within: timeout, every: .milliseconds(10), { !process.isRunning }) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CommandError(description: "counterpoint \(arguments.joined(separator: " ")) still running after \(timeout)")
        }
        return process.terminationStatus
    }

    /// Waits until stderr contains `text`; false if the process ended or the deadline passed first.
    func waitForStderr(containing text: String, timeout: Duration = .seconds(30)) async throws -> Bool {
        try await eventually(within: timeout, every: .milliseconds(10)) { stderr.contains(text) || !process.isRunning }
        return stderr.contains(text)
    }

    /// stderr without swift-log's structured lines (`2026-11-20T10:00:00+0000 info …`): what the command itself said.
    var stderrMessages: [String] {
        stderr.split(separator: "\n").map(String.init).filter { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            let isLog = fields.count == 3 && fields[0].count >= 20 && fields[0].first?.isNumber == true
                && ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(String(fields[1]))
            return !isLog
        }
    }

    var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
}
