import Foundation
import Patience

/// Where the `counterpoint` executable under test lives: `COUNTERPOINT_BINARY` when set, else
/// beside the test bundle (SwiftPM builds both into the same folder), else the package's
/// `.build/debug` (as in EndToEndTests/Support/Executable.swift).
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
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/counterpoint").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }()

    /// Ours without any `COUNTERPOINT_*` variable, so a developer's settings cannot change a test.
    static let childEnvironment: [String: String] = ProcessInfo.processInfo.environment
        .filter { !$0.key.hasPrefix("COUNTERPOINT_") }
}

/// One `counterpoint` process, its output going to files in a scratch folder (files rather
/// than pipes, so that a chatty child never blocks on a full pipe).
final class CounterpointProcess {
    let arguments: [String]
    private let process = Process()
    private let stderrURL: URL

    init(_ arguments: [String], scratch: URL) throws {
        self.arguments = arguments
        stderrURL = scratch.appendingPathComponent("counterpoint-\(UUID().uuidString.prefix(8)).stderr")
        guard FileManager.default.createFile(atPath: stderrURL.path, contents: nil) else {
            throw FixtureError("cannot create \(stderrURL.path)")
        }
        process.executableURL = URL(fileURLWithPath: Executable.path)
        process.arguments = arguments
        process.environment = Executable.childEnvironment
        process.currentDirectoryURL = scratch
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()
    }

    var isRunning: Bool { process.isRunning }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    /// Resident memory now (VmRSS) and at its peak (VmHWM), from /proc; nil once the process ended.
    var memoryKilobytes: (current: Int, peak: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return Int(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") ?? 0
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the process to end; returns (exited normally, status), or nil at the deadline.
    func waitForExit(timeout: Duration) async throws -> (exited: Bool, status: Int32)? {
        guard try await eventually(within: timeout, every: .milliseconds(10), { !process.isRunning }) else { return nil }
        return (process.terminationReason == .exit, process.terminationStatus)
    }

    /// Ends a process the test no longer needs, so that no failure leaves one behind.
    func killIfRunning() async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        _ = try? await waitForExit(timeout: .seconds(10))
    }
}
