import Foundation
import Patience
import Programs

struct CommandError: Error, CustomStringConvertible {
    var description: String
}

extension RunningProgram {
    /// Waits for the exit status; kills the program and throws if it runs past `timeout`.
    func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        guard let ended = try await exit(within: timeout) else {
            await killIfRunning()
            throw CommandError(description: "counterpoint \(arguments.joined(separator: " ")) still running after \(timeout)")
        }
        return ended.status
    }

    /// Waits until stderr contains `text`; false if the program ended or the deadline passed first.
    func waitForStderr(containing text: String, timeout: Duration = .seconds(30)) async throws -> Bool {
        try await eventually(within: timeout, every: .milliseconds(10)) { stderr.contains(text) || !isRunning }
        return stderr.contains(text)
    }

    var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
}
