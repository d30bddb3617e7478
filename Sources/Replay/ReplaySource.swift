#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CounterpointCore
import EventLogs
import Generator
import Runtime

/// What a `Replayer` produces.
public enum ReplaySource: Sendable {
    /// Every line of these files, in this order, plain or gzip. Blank lines are skipped (they
    /// are not events, as for `batch`); every other line is produced as it is, invalid or not.
    case logFiles([LogFile])
    /// Valid synthetic events (`EventSynthesizer`: plays, and the other signals' events at the
    /// configuration's `signalShare`; `stream` separating their ids from generated logs), each
    /// occurring at the moment it is produced: demo traffic that lands in the current hour.
    /// Never ends by itself.
    case synthetic(GeneratorConfiguration, stream: UInt16 = 2)

    /// The log files under `paths` (files or directories, as `batch` finds them), in path order.
    /// Throws when a path is unreadable or none holds a log file.
    public static func logs(at paths: [String]) throws(ReplayError) -> ReplaySource {
        let inventory: LogInventory
        do {
            inventory = try LogDiscovery.inventory(of: paths)
        } catch {
            // EventLogError's messages name the path already.
            throw .logs("\(error)")
        }
        guard !inventory.files.isEmpty else { throw .noLogs(paths: paths) }
        return .logFiles(inventory.files)
    }

    func makeStream() -> any EventStream {
        switch self {
        case let .logFiles(files): LogEventStream(files: files)
        case let .synthetic(configuration, stream): SyntheticEventStream(configuration: configuration, stream: stream)
        }
    }
}

/// One event to produce: its bytes (borrowed for the call) and, when it is a valid event, its track.
typealias EventHandler = (_ event: UnsafeRawBufferPointer, _ trackID: Int64?) throws(ReplayError) -> Bool

/// The events of a source, one pass at a time.
protocol EventStream {
    /// Calls `handler` for each event of one pass until it returns false. Returns true when
    /// the pass reached its end, false when the handler stopped it.
    mutating func pass(_ handler: EventHandler) throws(ReplayError) -> Bool
    /// Whether another pass would produce anything new (false for a source that never ends).
    var canRepeat: Bool { get }
    /// Lines skipped because they hold nothing (blank or only whitespace).
    var blankLinesSkipped: Int { get }
}

/// The lines of log files, keyed by the track id that `EventParser` finds in them.
struct LogEventStream: EventStream {
    let files: [LogFile]
    private(set) var blankLinesSkipped = 0
    let canRepeat = true

    /// Lines up to this long are produced whole; longer ones are cut to it (they are far over
    /// `EventLimits.maxEventBytes`, so still `too_large` for the consumer), keeping every
    /// message under Kafka's default limit of 1,000,000 bytes.
    static let maxLineBytes = 900_000

    init(files: [LogFile]) { self.files = files }

    /// Thrown through `LogReader.forEachChunk` to stop in the middle of a file.
    private struct Stopped: Error {}

    mutating func pass(_ handler: EventHandler) throws(ReplayError) -> Bool {
        for file in files {
            do {
                let reader = try LogReader(file: file, chunkSize: 1 << 20, maxLineBytes: Self.maxLineBytes)
                try reader.forEachChunk { chunk, _ in
                    guard try forEachLine(in: chunk, handler) else { throw Stopped() }
                }
            } catch is Stopped {
                return false
            } catch let error as ReplayError {
                throw error
            } catch let error as EventLogError {
                throw .logs("\(error)")
            } catch {
                throw .logs("cannot read \(file.path): \(error)")
            }
        }
        return true
    }

    private mutating func forEachLine(in chunk: UnsafeRawBufferPointer, _ handler: EventHandler) throws(ReplayError) -> Bool {
        guard let base = chunk.baseAddress else { return true }
        var start = 0
        while start < chunk.count {
            // The file's last line may lack its `\n`.
            let end = memchr(base + start, Int32(UInt8(ascii: "\n")), chunk.count - start)
                .map { base.distance(to: UnsafeRawPointer($0)) } ?? chunk.count
            let line = UnsafeRawBufferPointer(start: base + start, count: end - start)
            start = end + 1
            switch EventParser.parse(line) {
            case .success(let event):
                guard try handler(line, event.trackID) else { return false }
            case .failure(let rejection) where rejection.reason == .empty:
                blankLinesSkipped += 1
            case .failure:
                guard try handler(line, nil) else { return false }
            }
        }
        return true
    }
}

/// Endless valid events occurring now.
struct SyntheticEventStream: EventStream {
    private var synthesizer: EventSynthesizer
    private var line: [UInt8] = []
    private let clock: WallClock
    let canRepeat = false
    let blankLinesSkipped = 0

    init(configuration: GeneratorConfiguration, stream: UInt16) {
        var configuration = configuration
        // The synthesizer's hourly schedule is not used; an empty one costs nothing to plan.
        configuration.events = 0
        configuration.hours = 1
        synthesizer = EventSynthesizer(configuration: configuration, stream: stream)
        clock = configuration.clock
        line.reserveCapacity(512)
    }

    mutating func pass(_ handler: EventHandler) throws(ReplayError) -> Bool {
        while true {
            line.removeAll(keepingCapacity: true)
            let event = synthesizer.appendEvent(occurredAtMilliseconds: clock.epochMilliseconds(), to: &line)
            // Array.withUnsafeBytes only rethrows untyped errors, so carry the typed one out by hand.
            let proceed = line.withUnsafeBytes { bytes in
                Result { () throws(ReplayError) in try handler(bytes, event.trackID) }
            }
            guard try proceed.get() else { return false }
        }
    }
}
