import Foundation
import Patience
import Programs
import Scratch
import Testing

/// What of deploy/ can be checked on a machine without a container engine.
@Suite("Deploy files", .onTestThreads)
struct DeployFilesTests {
    /// The repository root (this file is Tests/EndToEndTests/DeployFilesTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("the Dockerfile's build stage copies everything SwiftPM needs to load the package and find the counterpoint product")
    func dockerBuildContextLoads() async throws {
        let dockerfile = try String(contentsOf: Self.root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        // The build stage: from the first FROM to the next one.
        let stages = dockerfile.components(separatedBy: "\nFROM ")
        try #require(stages.count == 3, "expected a header, a build stage and a runtime stage")
        let copies = stages[1].split(separator: "\n").filter { $0.hasPrefix("COPY ") && !$0.contains("--from") }
            .map { $0.split(separator: " ").map(String.init) }
        #expect(!copies.isEmpty)
        try await withTemporaryDirectory { context in
            for copy in copies {
                let (source, target) = (copy[1], copy[2] == "./" ? copy[1] : copy[2])
                let destination = context.appendingPathComponent(target)
                try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: Self.root.appendingPathComponent(source), to: destination)
            }
            let result = try await Self.run(["swift", "package", "--package-path", context.path, "describe", "--type", "json"])
            let copied = (try? FileManager.default.contentsOfDirectory(atPath: context.path)) ?? []
            #expect(result.status == 0, "swift package describe failed on the Dockerfile's context \(copied):\n\(result.output.suffix(2_000))")
            #expect(result.output.contains(#""name" : "counterpoint""#))
        }
    }

    /// Runs `arguments` through `/usr/bin/env` to its end; its status and output (errors included).
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let outcome = try await Program.run("/usr/bin/env", arguments, mergingErrors: true)
        return (outcome.status, outcome.text)
    }
}
