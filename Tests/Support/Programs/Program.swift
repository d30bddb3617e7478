import Foundation
import Runtime
import Scratch

/// The one way tests run another program to its end — `kcat`, `python3`, `sqlite3`, `gzip`,
/// `openssl`, `curl`, PostgreSQL's tools — and read what it printed.
///
/// Started with `posix_spawn` and waited for with `waitpid`, not with Foundation's `Process`:
/// on Linux `Process.waitUntilExit()` waits on a run loop for a notice of the child's exit, and
/// under the parallel suites that notice came minutes late, while the waiting test held one of
/// the two threads of Swift's cooperative pool. The program's input, output and errors are
/// files in a scratch directory, not pipes, so no pipe can fill up while nobody reads it, and a
/// daemon the program leaves running (`pg_ctl start`) cannot keep the run open.
public enum Program {
    /// What a program left when it ended.
    public struct Outcome: Sendable {
        /// How it ended.
        public var ended: Termination
        /// What it wrote to standard output (and to standard error, when `mergingErrors`).
        public var output: [UInt8]
        /// What it wrote to standard error, when not merged into `output`.
        public var errors: String

        public var text: String { String(decoding: output, as: UTF8.self) }
        /// The exit status, or 128 + the signal's number when a signal ended it (as a shell says).
        public var status: Int32 { ended.exited ? ended.status : 128 + ended.status }
    }

    /// A program that ended with a status other than 0, with what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public var command: String
        public var outcome: Outcome
        public var description: String {
            "\(command) ended with status \(outcome.status): \(String((outcome.text + outcome.errors).suffix(2_000)))"
        }
    }

    /// Runs `executable` with `arguments` to its end, `input` on its standard input, on a thread
    /// of its own: the calling task is suspended, no thread of the cooperative pool is held.
    /// `runAs` runs it as that user (through `runuser`), from "/".
    public static func run(_ executable: String, _ arguments: [String], input: [UInt8] = [],
                           mergingErrors: Bool = false, runAs: String? = nil) async throws -> Outcome {
        try await BlockingThread.run(name: "test-program") {
            try runBlocking(executable, arguments, input: input, mergingErrors: mergingErrors, runAs: runAs)
        }
    }

    /// `run`, throwing `Failure` unless the program ended with status 0; returns its output.
    @discardableResult
    public static func check(_ executable: String, _ arguments: [String], input: [UInt8] = [],
                             mergingErrors: Bool = true, runAs: String? = nil) async throws -> String {
        try await run(executable, arguments, input: input, mergingErrors: mergingErrors, runAs: runAs)
            .checked(executable, arguments)
    }

    /// `run` for synchronous callers: blocks the calling thread until the program has ended.
    /// For short tools only — in a test body the blocked thread is one of the cooperative pool's.
    public static func runBlocking(_ executable: String, _ arguments: [String], input: [UInt8] = [],
                                   mergingErrors: Bool = false, runAs: String? = nil) throws -> Outcome {
        let scratch = try TemporaryDirectory("counterpoint-program")
        let inputPath = scratch.url.appendingPathComponent("input").path
        let outputPath = scratch.url.appendingPathComponent("output").path
        let errorsPath = scratch.url.appendingPathComponent("errors").path
        guard FileManager.default.createFile(atPath: inputPath, contents: Data(input)) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: inputPath])
        }
        let pid = try Spawn.start(executable, arguments, environment: nil, input: inputPath, output: outputPath,
                                  errors: mergingErrors ? nil : errorsPath, runAs: runAs)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = FileManager.default.contents(atPath: outputPath) ?? Data()
        let errors = mergingErrors ? Data() : (FileManager.default.contents(atPath: errorsPath) ?? Data())
        return Outcome(ended: Spawn.termination(status), output: [UInt8](output), errors: String(decoding: errors, as: UTF8.self))
    }

    /// `runBlocking`, throwing `Failure` unless the program ended with status 0; returns its output.
    @discardableResult
    public static func checkBlocking(_ executable: String, _ arguments: [String], input: [UInt8] = [],
                                     mergingErrors: Bool = true, runAs: String? = nil) throws -> String {
        try runBlocking(executable, arguments, input: input, mergingErrors: mergingErrors, runAs: runAs)
            .checked(executable, arguments)
    }
}

extension Program.Outcome {
    /// The output as text when the status is 0; `Program.Failure` otherwise.
    public func checked(_ executable: String, _ arguments: [String]) throws -> String {
        guard status == 0 else {
            throw Program.Failure(command: ([executable] + arguments).joined(separator: " "), outcome: self)
        }
        return text
    }
}
