import Foundation
import Programs

/// Kafka clients others wrote — `kcat` and kafka-python — which must be able to produce into the
/// mock cluster. Their tests are skipped, saying why, where a client is not installed.
public enum OtherClients {
    public static let kcat = "/usr/bin/kcat"
    public static let python = "/usr/bin/python3"
    public static let hasKcat = FileManager.default.isExecutableFile(atPath: kcat)
    public static let hasKafkaPython = (try? Program.runBlocking(python, ["-c", "import kafka"]))?.status == 0

    /// Runs `kcat` with `arguments` to its end, `input` on its standard input.
    public static func kcat(_ arguments: [String], input: String) async throws {
        try await Program.check(kcat, arguments, input: Array(input.utf8))
    }

    /// Runs a kafka-python `script` to its end, `input` on its standard input.
    public static func python(_ script: String, _ arguments: [String], input: String = "") async throws {
        try await Program.check(python, ["-c", script] + arguments, input: Array(input.utf8))
    }
}
