import Foundation
import Patience
import Runtime

/// How a program ended: its exit status, or the signal that ended it.
public struct Termination: Sendable, Equatable, CustomStringConvertible {
    /// The exit status, or the signal's number when `exited` is false.
    public var status: Int32
    /// False when a signal ended the program.
    public var exited: Bool

    public init(status: Int32, exited: Bool) {
        self.status = status
        self.exited = exited
    }

    public var description: String { exited ? "exit \(status)" : "signal \(status)" }
}

/// A program the tests start and leave running — `counterpoint consume`, `serve`, `run`, a load
/// test — its standard output and errors going to files in a scratch folder (files rather than
/// pipes, so that a chatty child never blocks on a full pipe). The one way tests run a program
/// in the background.
///
/// Started with `posix_spawn`; whether it still runs is asked of the kernel (`waitpid` without
/// waiting) each time, so an ended program is seen at once — Foundation's `Process` learns it
/// from a notice that came seconds to minutes late under the parallel suites.
public final class RunningProgram: Sendable {
    public let arguments: [String]
    public let processIdentifier: pid_t
    /// Where the output goes, to be read from any thread.
    public let stdoutURL: URL
    public let stderrURL: URL
    /// Nil while the program runs; how it ended once it has been reaped.
    private let ended = Locked<Termination?>(nil)

    /// Starts `executable` with `arguments` and `environment` (the whole of it), in
    /// `workingDirectory` (ours when nil); its output files are made in `scratch`.
    public init(_ executable: String, _ arguments: [String], scratch: URL, environment: [String: String],
                workingDirectory: URL? = nil) throws {
        self.arguments = arguments
        let name = "command-\(UUID().uuidString.prefix(8))"   // tests tell these files apart by the prefix
        stdoutURL = scratch.appendingPathComponent("\(name).stdout")
        stderrURL = scratch.appendingPathComponent("\(name).stderr")
        let pid = try Spawn.start(executable, arguments, environment: environment, input: "/dev/null",
                                  output: stdoutURL.path, errors: stderrURL.path, workingDirectory: workingDirectory?.path)
        processIdentifier = pid
    }

    /// How the program ended; nil while it runs.
    public var termination: Termination? {
        ended.withLock { reaped(&$0) }
    }

    public var isRunning: Bool { termination == nil }
    public var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    /// Sends `signal` while the program runs (never to a process that has taken its id since).
    public func signal(_ signal: Int32) {
        ended.withLock { ended in
            if reaped(&ended) == nil { kill(processIdentifier, signal) }
        }
    }

    /// Waits for the program to end; nil when it still runs at the deadline.
    public func exit(within timeout: Duration) async throws -> Termination? {
        try await eventually(within: timeout, every: .milliseconds(10)) { !isRunning }
        return termination
    }

    /// Ends a program the test no longer needs, so that no failure leaves one behind.
    public func killIfRunning() async {
        signal(SIGKILL)
        _ = try? await exit(within: .seconds(10))
    }

    /// Bytes the program has read so far through read(2)/pread(2) (`rchar` in Linux's
    /// /proc/<pid>/io); nil once it has ended.
    public var bytesRead: Int64? {
        procFile("io").flatMap { Self.field("rchar", in: $0) }.map(Int64.init)
    }

    /// Resident memory now (VmRSS) and at its peak (VmHWM), and the anonymous part of it now
    /// (RssAnon: the program's own memory, without the store's memory-mapped file pages, which
    /// the page cache shares), in KiB; nil once it has ended.
    public var memoryKilobytes: (current: Int, peak: Int, anonymous: Int)? {
        guard let status = procFile("status"), let current = Self.field("VmRSS", in: status),
              let peak = Self.field("VmHWM", in: status), let anonymous = Self.field("RssAnon", in: status) else { return nil }
        return (current, peak, anonymous)
    }

    /// The text of /proc/<pid>/`file` while the program runs.
    private func procFile(_ file: String) -> String? {
        guard isRunning else { return nil }
        return try? String(contentsOfFile: "/proc/\(processIdentifier)/\(file)", encoding: .utf8)
    }

    /// The number after `name:` on its line of a /proc file.
    private static func field(_ name: String, in text: String) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return Int(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
    }

    /// `ended`, reaping the program first if it has ended since it was last asked.
    private func reaped(_ ended: inout Termination?) -> Termination? {
        if ended == nil { ended = reap() }
        return ended
    }

    private func reap() -> Termination? {
        var status: Int32 = 0
        while true {
            let result = waitpid(processIdentifier, &status, WNOHANG)
            if result == processIdentifier { break }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            return Termination(status: -1, exited: false)   // not ours to wait for: cannot happen
        }
        return Spawn.termination(status)
    }

    deinit {
        // An ended program is reaped even if nobody asked (no zombie stays behind).
        _ = termination
    }
}

extension RunningProgram {
    /// stderr without the structured log lines (`2026-11-20T10:00:00+0000 info …`) that swift-log
    /// writes there: what the command itself said.
    public var stderrMessages: [String] {
        Self.messages(in: stderr)
    }

    /// The lines of `text` that are not swift-log's structured lines.
    public static func messages(in text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init).filter { !isLogLine($0) }
    }

    public static func isLogLine(_ line: String) -> Bool {
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        let fields = line.split(separator: " ", maxSplits: 2)
        guard fields.count == 3, fields[0].count >= 20, fields[0].first?.isNumber == true,
              fields[0].dropFirst(4).first == "-" else { return false }
        return levels.contains(String(fields[1]))
    }
}
