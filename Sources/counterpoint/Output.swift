import ArgumentParser
import Foundation
import Runtime

/// A progress line on stderr, redrawn in place — only when stderr is a terminal, so logs
/// and pipes never fill with carriage returns.
final class ProgressLine: Sendable {
    private struct Drawing {
        var lastDraw = ContinuousClock.now - .seconds(1)
        var drawn = false
    }

    private let enabled: Bool
    private let state = Locked(Drawing())

    init(enabled: Bool = true) {
        self.enabled = enabled && isatty(STDERR_FILENO) == 1
    }

    func update(_ text: String) {
        guard enabled else { return }
        state.withLock { state in
            let now = ContinuousClock.now
            guard now - state.lastDraw >= .milliseconds(200) else { return }
            state.lastDraw = now
            state.drawn = true
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
        }
    }

    func finish() {
        state.withLock { state in
            if state.drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            state.drawn = false
        }
    }
}

/// `--json` of the commands that end with a summary (`generate`, `batch`, `replay`,
/// `copy-store`): the summary as one JSON object on stdout, else as a line for people, with a
/// progress line on a terminal meanwhile (none with `--json`).
struct SummaryOutput: ParsableArguments {
    @Flag(help: "Print the summary as one JSON object (env COUNTERPOINT_JSON).")
    var json = Environment.bool("json")

    /// The progress line to redraw while the command works.
    func progressLine() -> ProgressLine {
        ProgressLine(enabled: !json)
    }

    /// Prints the summary: `object` with `--json`, else `text`.
    func print(_ object: [String: Any], text: @autoclosure () -> String) throws {
        if json {
            try printJSON(object)
        } else {
            Swift.print(text())
        }
    }
}

/// Prints one JSON object on stdout.
func printJSON(_ object: [String: Any]) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    FileHandle.standardOutput.write(data)
    FileHandle.standardOutput.write(Data("\n".utf8))
}

/// Bytes for people: 1.95 GB.
struct ByteCount: CustomStringConvertible {
    let bytes: Int64
    init(_ bytes: Int64) { self.bytes = bytes }
    init(_ bytes: Int) { self.bytes = Int64(bytes) }

    var description: String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(bytes) B" : String(format: "%.2f", value) + " " + units[unit]
    }
}

/// A fatal error for the one-line message a subcommand exits with.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
