import ArgumentParser
import Realtime

/// The realtime consumer's flags, shared by `consume` and `run` (whose realtime consumer is the
/// same component): one set of limits and one place they become its configuration.
struct RealtimeFlags: ParsableArguments {
    @Option(help: "Milliseconds between flushes of counts and offsets (env COUNTERPOINT_FLUSH_INTERVAL_MS).")
    var flushIntervalMs: Int = Environment.integer("flush-interval-ms", default: 250)

    @Option(help: """
        Milliseconds after which the realtime consumer group drops a silent member, e.g. a killed \
        process, and gives its partitions to the others; heartbeats go every third of it, at most \
        every 3 s (env COUNTERPOINT_SESSION_TIMEOUT_MS).
        """)
    var sessionTimeoutMs: Int = Environment.integer("session-timeout-ms", default: 10_000)

    func validate() throws {
        guard (10...3_600_000).contains(flushIntervalMs) else {
            throw ValidationError("--flush-interval-ms must be between 10 and 3600000")
        }
        guard (1_000...3_600_000).contains(sessionTimeoutMs) else {
            throw ValidationError("--session-timeout-ms must be between 1000 and 3600000")
        }
    }

    func apply(to configuration: inout RealtimeConfiguration) {
        configuration.flushInterval = .milliseconds(flushIntervalMs)
        configuration.sessionTimeoutMilliseconds = sessionTimeoutMs
    }
}
