import Foundation

/// The `counterpoint` executable under test, and what its children get.
public enum Executable {
    /// `COUNTERPOINT_BINARY` when set, else the one SwiftPM built beside the test bundle, else
    /// the package's `.build/debug`.
    public static let path: String = {
        if let override = ProcessInfo.processInfo.environment["COUNTERPOINT_BINARY"], !override.isEmpty {
            return override
        }
        let candidates: [String?] = [
            Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("counterpoint").path,
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("counterpoint").path,
            packageRoot.appendingPathComponent(".build/debug/counterpoint").path,
        ]
        let paths = candidates.compactMap { $0 }
        return paths.first { FileManager.default.isExecutableFile(atPath: $0) } ?? paths.last!
    }()

    /// The package's root folder, found from this file's own path.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // Programs
        .deletingLastPathComponent()   // Support
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()

    /// The environment for children: ours without any `COUNTERPOINT_*` variable, so that a
    /// developer's shell settings cannot change what a flag-less default means in a test.
    public static let childEnvironment: [String: String] = ProcessInfo.processInfo.environment
        .filter { !$0.key.hasPrefix("COUNTERPOINT_") }

    /// Starts `counterpoint` with `arguments` in the background, in `scratch`, its output in files there.
    public static func start(_ arguments: [String], scratch: URL, environment: [String: String] = [:]) throws -> RunningProgram {
        try RunningProgram(path, arguments, scratch: scratch, environment: childEnvironment.merging(environment) { $1 },
                           workingDirectory: scratch)
    }
}
