import ArgumentParser

/// The `counterpoint` executable: a thin shell that parses flags and hands them to the
/// builder functions of the modules (which the tests call directly too).
@main
struct Counterpoint: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "counterpoint",
        abstract: "Real-time play counters: a realtime layer, a batch layer, and a reader that merges them.",
        discussion: """
        Every flag can also be set by an environment variable COUNTERPOINT_<FLAG>, e.g.
        COUNTERPOINT_DATA_DIR=/var/lib/counterpoint for --data-dir. Flags win over the environment.
        """,
        subcommands: [RunCommand.self, BatchCommand.self, ServeCommand.self, GenerateCommand.self])
}
