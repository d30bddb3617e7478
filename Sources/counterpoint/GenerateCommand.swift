import ArgumentParser
import CounterpointCore
import Foundation
import Generator

struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write synthetic event logs (plays and the other signals) for demos, tests and load tests.",
        discussion: """
        Events are written one file per UTC hour in the layout `batch` and the archiver use \
        (<logs>/<YYYY-MM-DD>/<HH>.ndjson[.gz] plus <HH>.closed markers). Track popularity follows \
        a Zipf law, the hourly volume a daily rhythm. Every track has one creator (SPEC §11): \
        catalogue sizes follow a Zipf law too (most creators own a few tracks, a few own \
        thousands), and --creator-share of the events name it in `creator_id`. --duplicates and \
        --malformed add lines the batch layer must de-duplicate or reject. The same --seed gives \
        the same bytes.

        Beside the plays, --signal-share of the events are of the other types (SPEC §11), each \
        with its fixed part of that share: at 0.09, of all events, like 4 %, unlike 0.4 %, \
        repost 1 %, unrepost 0.1 %, comment 1.5 % (with a position on the waveform), \
        comment_deleted 0.2 % (most with a position), download 1.8 %. --no-signal NAME (downloads, \
        likes, reposts or comments; repeatable) turns a signal off, retractions included: its part \
        is written as plays, so the other signals keep their rates. \(defaultShareNote)
        """)

    private static let defaultShareNote = "The default share is \(SignalMix.realisticShare); 0 writes plays only."

    @Option(help: "Output directory (env COUNTERPOINT_LOGS).")
    var logs: String = Environment.string("logs", default: "./logs")

    @Option(help: "Number of distinct valid events (env COUNTERPOINT_EVENTS).")
    var events: Int = Environment.integer("events", default: 1_000_000)

    @Option(help: "Number of tracks (env COUNTERPOINT_TRACKS).")
    var tracks: Int = Environment.integer("tracks", default: 10_000)

    @Option(help: "Number of hours the events span (env COUNTERPOINT_HOURS).")
    var hours: Int = Environment.integer("hours", default: 48)

    @Option(help: "First hour, RFC 3339 UTC (default: the current hour minus --hours) (env COUNTERPOINT_START).")
    var start: String?

    @Option(help: "Zipf exponent of track popularity (env COUNTERPOINT_SKEW).")
    var skew: Double = Environment.double("skew", default: 1.1)

    @Option(help: "Number of creators; 0 writes no creator_id (default: one per ten tracks) (env COUNTERPOINT_CREATORS).")
    var creators: Int?

    @Option(help: "Zipf exponent of catalogue sizes: creator c owns tracks in proportion to 1/c^s (env COUNTERPOINT_CATALOGUE_SKEW).")
    var catalogueSkew: Double = Environment.double("catalogue-skew", default: 1.0)

    @Option(help: "Fraction of events that name their track's creator, 0…1 (env COUNTERPOINT_CREATOR_SHARE).")
    var creatorShare: Double = Environment.double("creator-share", default: 0.97)

    @Option(help: "Fraction of events that are not plays (likes, reposts, comments, downloads and their retractions), 0…1 (env COUNTERPOINT_SIGNAL_SHARE).")
    var signalShare: Double = Environment.double("signal-share", default: SignalMix.realisticShare)

    @Option(name: .customLong("no-signal"), parsing: .singleValue,
            help: ArgumentHelp("A signal not to generate: downloads, likes, reposts or comments; repeatable (env COUNTERPOINT_NO_SIGNAL, a comma list).",
                               valueName: "signal"))
    var noSignal: [String] = Environment.list("no-signal")

    @Option(help: "Fraction of events written twice, 0…1 (env COUNTERPOINT_DUPLICATES).")
    var duplicates: Double = Environment.double("duplicates", default: 0)

    @Option(help: "Fraction of extra malformed lines, 0…1 (env COUNTERPOINT_MALFORMED).")
    var malformed: Double = Environment.double("malformed", default: 0)

    @Option(help: "Random seed (env COUNTERPOINT_SEED).")
    var seed: UInt64 = UInt64(Environment.integer("seed", default: 1))

    @Flag(help: "Write gzip files (env COUNTERPOINT_GZIP).")
    var gzip = Environment.bool("gzip")

    @OptionGroup var output: SummaryOutput

    func validate() throws {
        guard events >= 0 else { throw ValidationError("--events must be 0 or more") }
        guard tracks >= 1 else { throw ValidationError("--tracks must be at least 1") }
        guard hours >= 1 else { throw ValidationError("--hours must be at least 1") }
        guard (0...1).contains(duplicates) else { throw ValidationError("--duplicates must be between 0 and 1") }
        guard (0...1).contains(malformed) else { throw ValidationError("--malformed must be between 0 and 1") }
        guard skew >= 0 else { throw ValidationError("--skew must be 0 or more") }
        guard (creatorCount ?? 0) >= 0 else { throw ValidationError("--creators must be 0 or more") }
        guard catalogueSkew >= 0 else { throw ValidationError("--catalogue-skew must be 0 or more") }
        guard (0...1).contains(creatorShare) else { throw ValidationError("--creator-share must be between 0 and 1") }
        guard (0...1).contains(signalShare) else { throw ValidationError("--signal-share must be between 0 and 1") }
        _ = try signalsGenerated()
        _ = try parseHourFlag(firstHour, flag: "--start")
    }

    /// Every signal but those of `--no-signal`.
    private func signalsGenerated() throws -> Set<Signal> {
        let offered = Signal.allCases.filter { $0 != .plays }
        var signals = Set(Signal.allCases)
        for name in noSignal {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard let signal = Signal(rawValue: trimmed), signal != .plays else {
                throw ValidationError("--no-signal takes \(offered.map(\.rawValue).joined(separator: ", ")) (plays are always generated), not \"\(trimmed)\"")
            }
            signals.remove(signal)
        }
        return signals
    }

    /// `--creators`, falling back to the environment.
    private var creatorCount: Int? { creators ?? Environment.optionalString("creators").flatMap { Int($0) } }

    /// `--start`, falling back to the environment.
    private var firstHour: String? { start ?? Environment.optionalString("start") }

    func run() throws {
        var configuration = GeneratorConfiguration()
        configuration.events = events
        configuration.tracks = tracks
        configuration.hours = hours
        configuration.start = try parseHourFlag(firstHour, flag: "--start")
        configuration.popularitySkew = skew
        configuration.creators = creatorCount
        configuration.catalogueSkew = catalogueSkew
        configuration.creatorShare = creatorShare
        configuration.signalShare = signalShare
        configuration.signals = try signalsGenerated()
        configuration.duplicateRate = duplicates
        configuration.malformedRate = malformed
        configuration.seed = seed
        configuration.gzip = gzip
        let progress = output.progressLine()
        let summary = try Generator.generate(configuration, into: logs) { written in
            progress.update("generate: \(written.formatted()) events")
        }
        progress.finish()
        let otherTypes = summary.eventsByType.filter { $0.key != .play }
        let mix = otherTypes.isEmpty ? "" : " (" + EventType.allCases.compactMap { type in
            otherTypes[type].map { "\($0.formatted()) \(type.name)" }
        }.joined(separator: ", ") + " beside the plays)"
        try output.print([
            "logs": logs, "events": summary.events, "duplicates": summary.duplicates,
            "events_by_type": Dictionary(uniqueKeysWithValues: summary.eventsByType.map { ($0.key.name, $0.value) }),
            "malformed": summary.malformed, "lines": summary.lines, "files": summary.files,
            "bytes": summary.bytes, "tracks": summary.tracks, "hours": summary.hours,
            "seconds": summary.seconds,
        ], text: "generate: wrote \(summary.lines.formatted()) lines (\(summary.events.formatted()) events, " +
                 "\(summary.duplicates.formatted()) duplicates, \(summary.malformed.formatted()) malformed)\(mix) " +
                 "in \(summary.files) files, \(ByteCount(summary.bytes)), into \(logs) " +
                 "in \(String(format: "%.2f", summary.seconds)) s")
    }
}
