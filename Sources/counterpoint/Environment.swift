import ArgumentParser
import CounterStore
import CounterpointCore
import Foundation
import Logging

/// Defaults read from `COUNTERPOINT_<FLAG>` environment variables (README.md): a flag's
/// default is the variable when set, so the flag itself still wins.
enum Environment {
    static func string(_ flag: String, default defaultValue: String) -> String {
        ProcessInfo.processInfo.environment[variable(flag)] ?? defaultValue
    }

    static func optionalString(_ flag: String) -> String? {
        ProcessInfo.processInfo.environment[variable(flag)]
    }

    static func integer(_ flag: String, default defaultValue: Int) -> Int {
        optionalString(flag).flatMap(Int.init) ?? defaultValue
    }

    static func double(_ flag: String, default defaultValue: Double) -> Double {
        optionalString(flag).flatMap(Double.init) ?? defaultValue
    }

    static func bool(_ flag: String) -> Bool {
        guard let value = optionalString(flag)?.lowercased() else { return false }
        return ["1", "true", "yes", "on"].contains(value)
    }

    static func list(_ flag: String) -> [String] {
        optionalString(flag).map { $0.split(separator: ",").map(String.init) } ?? []
    }

    /// `--data-dir` → `COUNTERPOINT_DATA_DIR`.
    static func variable(_ flag: String) -> String {
        "COUNTERPOINT_" + flag.uppercased().replacingOccurrences(of: "-", with: "_")
    }
}

/// Flags every long-running or store-touching subcommand shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"),
            help: "Directory holding realtime.sqlite and batch.sqlite (env COUNTERPOINT_DATA_DIR).")
    var dataDirectory: String = Environment.string("data-dir", default: "./data")

    @Option(name: .customLong("log-level"),
            help: "trace, debug, info, notice, warning, error or critical (env COUNTERPOINT_LOG_LEVEL).")
    var logLevel: String = Environment.string("log-level", default: "info")

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }
}

/// `--store` of the commands that open the stores (`run`, `consume`, `batch`, `serve`).
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("store"), help: ArgumentHelp("""
        Where the counts live: nothing (the default) for the SQLite files under --data-dir, or a \
        PostgreSQL connection URI, postgresql://user[:password]@host[:port]/dbname[?…] in libpq's \
        syntax, to share the stores between machines (env COUNTERPOINT_STORE). A password is better \
        kept in a PGPASSFILE than in the URI.
        """, valueName: "url"))
    var store: String?

    func validate() throws {
        _ = try backend(dataDirectory: ".")
    }

    /// The stores these options and `dataDirectory` name.
    func backend(dataDirectory: String) throws -> StoreBackend {
        do {
            // The environment is read here, not as the flag's default, which --help would show.
            return try StoreBackend(store: store ?? Environment.optionalString("store"), dataDirectory: dataDirectory)
        } catch {
            throw ValidationError("--store: \(error)")
        }
    }
}

/// Parses `--from`/`--to`: RFC 3339 UTC, floored to the hour.
func parseHourFlag(_ text: String?, flag: String) throws -> Hour? {
    guard let text else { return nil }
    guard let milliseconds = UTCTime.parseTimestamp(text) else {
        throw ValidationError("\(flag) must be an RFC 3339 UTC time such as 2026-11-20T10:00:00Z, not '\(text)'")
    }
    return Hour(epochMilliseconds: milliseconds)
}
