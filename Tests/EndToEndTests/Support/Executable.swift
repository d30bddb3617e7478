import Foundation
import Patience

/// Where the `counterpoint` executable under test lives: `COUNTERPOINT_BINARY` when set, else
/// beside the test bundle (SwiftPM builds both into the same folder), else the package's
/// `.build/debug`.
enum Executable {
    static let path: String = {
        if let override = ProcessInfo.processInfo.environment["COUNTERPOINT_BINARY"], !override.isEmpty {
            return override
        }
        var candidates: [String] = []
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("counterpoint").path)
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("counterpoint").path)
        candidates.append(packageRoot.appendingPathComponent(".build/debug/counterpoint").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }()

    /// The package's root folder, found from this file's own path.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // Support
        .deletingLastPathComponent()   // EndToEndTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()

    /// The environment for children: ours without any `COUNTERPOINT_*` variable, so that a
    /// developer's shell settings cannot change what a flag-less default means in a test.
    static let childEnvironment: [String: String] = ProcessInfo.processInfo.environment
        .filter { !$0.key.hasPrefix("COUNTERPOINT_") }
}

/// What a finished command left behind.
struct CommandResult {
    var arguments: [String]
    var status: Int32
    /// False when the process died of a signal rather than exiting.
    var exited: Bool
    var stdout: String
    var stderr: String

    /// stderr without the structured log lines (`2026-11-20T10:00:00+0000 info …`) that
    /// swift-log writes there: what is left is what the command itself said.
    var stderrMessages: [String] {
        stderr.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            .filter { !$0.isEmpty && !CommandResult.isLogLine($0) }
    }

    static func isLogLine(_ line: String) -> Bool {
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        let fields = line.split(separator: " ", maxSplits: 2)
        guard fields.count == 3, fields[0].count >= 20, fields[0].first?.isNumber == true,
              fields[0].dropFirst(4).first == "-" else { return false }
        return levels.contains(String(fields[1]))
    }

    var jsonObject: [String: Any]? {
        guard let data = stdout.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    var summary: String {
        "counterpoint \(arguments.joined(separator: " ")) → \(exited ? "exit" : "signal") \(status)\n" +
            "stdout: \(stdout.prefix(2_000))\nstderr: \(stderr.prefix(2_000))"
    }
}

struct CommandError: Error, CustomStringConvertible {
    var description: String
}

/// One `counterpoint` process (or another `executable`), its stdout and stderr going to files in a scratch folder
/// (files rather than pipes, so that a chatty child can never block on a full pipe).
final class RunningCommand {
    let arguments: [String]
    private let process = Process()
    /// Where the output goes, to be read from any thread.
    let stdoutURL: URL
    private let stderrURL: URL

    init(_ arguments: [String], scratch: URL, environment: [String: String] = [:],
         executable: String = Executable.path) throws {
        self.arguments = arguments
        let name = "command-\(UUID().uuidString.prefix(8))"
        stdoutURL = scratch.appendingPathComponent("\(name).stdout")
        stderrURL = scratch.appendingPathComponent("\(name).stderr")
        guard FileManager.default.createFile(atPath: stdoutURL.path, contents: nil),
              FileManager.default.createFile(atPath: stderrURL.path, contents: nil) else {
            throw CommandError(description: "cannot create output files in \(scratch.path)")
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = Executable.childEnvironment.merging(environment) { $1 }
        process.currentDirectoryURL = scratch
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()
    }

    var processIdentifier: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the process to end; nil when it is still running at the deadline.
    func waitForExit(timeout: Duration) async throws -> CommandResult? {
        guard try await eventually(within: timeout, every: .milliseconds(10), { !process.isRunning }) else { return nil }
        return CommandResult(arguments: arguments, status: process.terminationStatus,
                             exited: process.terminationReason == .exit, stdout: stdout, stderr: stderr)
    }

    /// Waits until stdout holds a complete first line, and returns it.
    func firstStdoutLine(timeout: Duration) async throws -> String? {
        try await eventually(within: timeout, every: .milliseconds(10)) { stdout.contains("\n") || !process.isRunning }
        return stdout.firstIndex(of: "\n").map { String(stdout[..<$0]) }
    }

    /// Bytes the process has read so far through read(2)/pread(2) (`rchar` in Linux's
    /// /proc/<pid>/io): how far a batch has got through its logs. Nil once it has ended.
    var bytesRead: Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/io", encoding: .utf8) else {
            return nil
        }
        for line in text.split(separator: "\n") where line.hasPrefix("rchar:") {
            return Int64(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Waits until the process has read `bytes`; false when it ended (or the deadline passed) first.
    func waitUntilRead(_ bytes: Int64, timeout: Duration) async throws -> Bool {
        try await eventually(within: timeout, every: .milliseconds(1)) { (bytesRead ?? 0) >= bytes || !process.isRunning }
        return process.isRunning && (bytesRead ?? 0) >= bytes
    }

    /// Ends a process the test no longer needs, so that no failure leaves one behind.
    func killIfRunning() async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        _ = try? await waitForExit(timeout: .seconds(10))
    }
}

/// Runs `counterpoint` with these arguments to the end (killing it after `timeout`).
func runCounterpoint(_ arguments: [String], scratch: URL, environment: [String: String] = [:],
                     timeout: Duration = .seconds(120)) async throws -> CommandResult {
    let command = try RunningCommand(arguments, scratch: scratch, environment: environment)
    guard let result = try await command.waitForExit(timeout: timeout) else {
        await command.killIfRunning()
        throw CommandError(description: "counterpoint \(arguments.joined(separator: " ")) still running after \(timeout)")
    }
    return result
}

/// Runs a command that must succeed, and returns its `--json` summary.
@discardableResult
func runCounterpointJSON(_ arguments: [String], scratch: URL) async throws -> [String: Any] {
    let result = try await runCounterpoint(arguments, scratch: scratch)
    let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: true)
    guard result.exited, result.status == 0, lines.count == 1, let object = result.jsonObject else {
        throw CommandError(description: "expected success and one JSON object on one line of stdout:\n\(result.summary)")
    }
    return object
}

/// Creates an empty file (a `.closed` marker), failing the test step if it cannot.
func touch(_ url: URL) throws {
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
        throw CommandError(description: "cannot create \(url.path)")
    }
}
