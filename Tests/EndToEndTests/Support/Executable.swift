import Foundation
import Patience
import Programs

/// What a finished command left behind.
struct CommandResult {
    var arguments: [String]
    var status: Int32
    /// False when the process died of a signal rather than exiting.
    var exited: Bool
    var stdout: String
    var stderr: String

    /// stderr without swift-log's structured lines: what the command itself said.
    var stderrMessages: [String] { RunningProgram.messages(in: stderr) }

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

extension RunningProgram {
    /// Waits for the program to end and returns what it left; nil when it still runs at the deadline.
    func waitForExit(timeout: Duration) async throws -> CommandResult? {
        guard let ended = try await exit(within: timeout) else { return nil }
        return CommandResult(arguments: arguments, status: ended.status, exited: ended.exited, stdout: stdout, stderr: stderr)
    }

    /// Waits until stdout holds a complete first line, and returns it.
    func firstStdoutLine(timeout: Duration) async throws -> String? {
        try await eventually(within: timeout, every: .milliseconds(10)) { stdout.contains("\n") || !isRunning }
        return stdout.firstIndex(of: "\n").map { String(stdout[..<$0]) }
    }

    /// Waits until the program has read `bytes`; false when it ended (or the deadline passed) first.
    func waitUntilRead(_ bytes: Int64, timeout: Duration) async throws -> Bool {
        try await eventually(within: timeout, every: .milliseconds(1)) { (bytesRead ?? 0) >= bytes || !isRunning }
        return isRunning && (bytesRead ?? 0) >= bytes
    }
}

/// Runs `counterpoint` with these arguments to the end (killing it after `timeout`).
func runCounterpoint(_ arguments: [String], scratch: URL, environment: [String: String] = [:],
                     timeout: Duration = .seconds(120)) async throws -> CommandResult {
    let command = try Executable.start(arguments, scratch: scratch, environment: environment)
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
