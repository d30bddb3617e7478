import Foundation
import Programs
import Scratch
import Testing

extension EndToEnd {
    @Suite("the command line")
    struct CommandLineInterface {
        static let flagsBySubcommand: [(String, [String])] = [
            ("generate", ["--logs", "--events", "--tracks", "--hours", "--start", "--skew", "--duplicates",
                          "--malformed", "--seed", "--gzip", "--json"]),
            ("batch", ["--data-dir", "--log-level", "--logs", "--from", "--to", "--all", "--workers", "--json"]),
            ("serve", ["--data-dir", "--log-level", "--listen", "--http-threads"]),
            ("run", ["--data-dir", "--listen", "--logs", "--demo", "--kafka-option", "--kafka-config", "--embedded-faults"]),
            ("consume", ["--brokers", "--kafka-option", "--kafka-config"]),
            ("archive", ["--brokers", "--kafka-option", "--kafka-config"]),
            ("replay", ["--brokers", "--kafka-option", "--kafka-config"]),
        ]

        @Test("--help of each subcommand exits 0 and mentions every flag and its environment variable",
              arguments: flagsBySubcommand.map(\.0))
        func helpMentionsFlags(subcommand: String) async throws {
            let flags = Self.flagsBySubcommand.first { $0.0 == subcommand }!.1
            try await withTemporaryDirectory { scratch in
                let result = try await runCounterpoint([subcommand, "--help"], scratch: scratch)
                #expect(result.exited && result.status == 0, "\(result.summary)")
                for flag in flags {
                    #expect(result.stdout.contains(flag), "\(subcommand) --help mentions \(flag)")
                    let variable = "COUNTERPOINT_" + flag.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
                    #expect(result.stdout.contains(variable), "\(subcommand) --help mentions \(variable)")
                }
            }
        }

        @Test("a process started with a low soft limit of open files raises it to the hard limit")
        func openFileLimitRaised() async throws {
            try await withTemporaryDirectory { scratch in
                let serve = try RunningProgram("/bin/sh", [
                    "-c", #"ulimit -Sn 256 && exec "$0" serve --listen 127.0.0.1:0 --data-dir "$1""#,
                    Executable.path, scratch.appendingPathComponent("data").path,
                ], scratch: scratch, environment: Executable.childEnvironment)
                do {
                    var limits: (soft: String, hard: String)?
                    try await Drill.waitUntil(timeout: .seconds(30)) {
                        let text = (try? String(contentsOfFile: "/proc/\(serve.processIdentifier)/limits", encoding: .utf8)) ?? ""
                        let fields = text.split(separator: "\n").first { $0.hasPrefix("Max open files") }?
                            .split(separator: " ", omittingEmptySubsequences: true) ?? []
                        // Once it listens, its signal handlers are in place for the stop below.
                        guard fields.count >= 5, serve.stderr.contains("reader listening") else { return false }
                        limits = (String(fields[3]), String(fields[4]))
                        return true
                    }
                    #expect(limits != nil && limits?.soft == limits?.hard, "\(String(describing: limits))")
                    serve.signal(SIGINT)
                    let ended = try await serve.exit(within: .seconds(15))
                    #expect(ended?.exited == true && ended?.status == 0, "\(serve.stderr)")
                } catch {
                    await serve.killIfRunning()
                    throw error
                }
            }
        }

        @Test("--help at the top lists the subcommands; it and consume's say what is counted: every signal, of tracks and creators")
        func topLevelHelp() async throws {
            try await withTemporaryDirectory { scratch in
                let result = try await runCounterpoint(["--help"], scratch: scratch)
                #expect(result.exited && result.status == 0, "\(result.summary)")
                for subcommand in Self.flagsBySubcommand.map(\.0) {
                    #expect(result.stdout.contains(subcommand), "counterpoint --help lists \(subcommand)")
                }
                let consume = try await runCounterpoint(["consume", "--help"], scratch: scratch)
                // SPEC §11's signals and subjects, as words a reader of the help looks for.
                for word in ["plays", "downloads", "likes", "reposts", "comments", "track", "creator"] {
                    #expect(result.stdout.contains(word), "counterpoint --help names \(word)")
                    #expect(consume.stdout.contains(word), "counterpoint consume --help names \(word)")
                }
            }
        }

        /// A bad flag (or environment) value: the arguments, the environment, and a word the
        /// one-line error must contain.
        static let badInvocations: [([String], [String: String], String)] = [
            (["batch", "--logs", "logs", "--from", "yesterday"], [:], "--from"),
            (["batch", "--logs", "logs", "--to", "2026-02-30T00:00:00Z"], [:], "--to"),
            (["batch", "--logs", "logs", "--from", "2026-11-20T10:00:00Z", "--to", "2026-11-20T09:00:00Z"], [:], "--from"),
            (["batch", "--logs", "logs", "--workers", "0"], [:], "--workers"),
            (["batch", "--logs", "logs", "--all", "--from", "2026-11-20T10:00:00Z"], [:], "--all"),
            (["batch", "--logs", "logs", "--workers", "many"], [:], "--workers"),
            (["batch", "--logs", "logs", "--frm", "2026-11-20T10:00:00Z"], [:], "--frm"),
            (["batch"], [:], "--logs"),
            (["batch", "--logs", "logs"], ["COUNTERPOINT_FROM": "yesterday"], "yesterday"),
            (["serve", "--listen", "nonsense"], [:], "--listen"),
            (["serve", "--listen", "127.0.0.1:99999"], [:], "--listen"),
            (["serve", "--http-threads", "0"], [:], "--http-threads"),
            (["generate", "--logs", "logs", "--events", "abc"], [:], "--events"),
            (["generate", "--logs", "logs", "--duplicates", "2"], [:], "--duplicates"),
            (["generate", "--logs", "logs", "--start", "yesterday"], [:], "--start"),
            (["run", "--listen", "nonsense"], [:], "--listen"),
            (["run", "--embedded-faults", "5:explode"], [:], "--embedded-faults"),
            (["run", "--embedded-faults", "drill", "--brokers", "127.0.0.1:9092"], [:], "--embedded-faults"),
            (["run"], ["COUNTERPOINT_EMBEDDED_FAULTS": "1:errors:gossip:3"], "--embedded-faults"),
            (["bogus"], [:], "bogus"),
        ]

        @Test("a bad flag value exits non-zero with one line on stderr that names it",
              arguments: badInvocations.indices)
        func badFlagValue(index: Int) async throws {
            let (arguments, environment, word) = Self.badInvocations[index]
            try await withTemporaryDirectory { scratch in
                let result = try await runCounterpoint(arguments, scratch: scratch, environment: environment, timeout: .seconds(30))
                #expect(result.exited && result.status != 0, "\(result.summary)")
                #expect(result.stderrMessages.count == 1, "one line on stderr:\n\(result.summary)")
                #expect(result.stderrMessages.first?.contains(word) == true, "the error names \(word):\n\(result.summary)")
                #expect(result.stdout.isEmpty, "\(result.summary)")
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
                    .filter { !$0.hasPrefix("command-") }
                #expect(leftovers.isEmpty, "a refused command creates nothing: \(leftovers)")
            }
        }
    }
}
