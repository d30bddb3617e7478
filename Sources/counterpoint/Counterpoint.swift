import ArgumentParser
import Foundation
import Runtime

/// The `counterpoint` executable: a thin shell that parses flags (and `COUNTERPOINT_<FLAG>`
/// variables) into configurations and hands them to the builders of `CounterpointApp`
/// (`buildRun`, `buildServe`, `buildConsume`, `buildArchive`, `buildBatch`), which the tests
/// call in-process too; the other commands call their module directly.
@main
struct Counterpoint: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "counterpoint",
        abstract: "Real-time counters of plays, downloads, likes, reposts and comments, per track and per creator: a realtime layer, a batch layer, and a reader that merges them.",
        discussion: """
        Every flag can also be set by an environment variable COUNTERPOINT_<FLAG>, e.g. \
        COUNTERPOINT_DATA_DIR=/var/lib/counterpoint for --data-dir. Flags win over the environment.
        """,
        subcommands: [RunCommand.self, ConsumeCommand.self, ArchiveCommand.self, BatchCommand.self, ServeCommand.self,
                      ReplayCommand.self, GenerateCommand.self, CopyStoreCommand.self])

    /// Like ArgumentParser's own `main()`, except that a failure is ONE line on stderr (README.md:
    /// scripts read it), without the usage text; `--help` and clean exits are unchanged.
    static func main() async {
        OpenFileLimit.raiseToHardLimit()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            guard code != .success else { exit(withError: error) }
            let message = message(for: error).split(separator: "\n", omittingEmptySubsequences: true).first
                .map(String.init) ?? "\(error)"
            FileHandle.standardError.write(Data("counterpoint: \(message)\n".utf8))
            Foundation.exit(code.rawValue)
        }
    }
}
