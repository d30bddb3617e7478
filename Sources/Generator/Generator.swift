#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CounterpointCore
import EventLogs
import Runtime

/// One (track, hour) cell of the exact counts a batch run must find in generated logs.
public struct TruthKey: Hashable, Sendable {
    public var trackID: Int64
    public var hour: Hour

    public init(trackID: Int64, hour: Hour) {
        self.trackID = trackID
        self.hour = hour
    }
}

/// What `Generator.generate` wrote.
public struct GeneratorSummary: Sendable {
    /// Valid unique events (exactly `configuration.events`), of every type.
    public var events = 0
    /// Valid unique events by type (`configuration.signalShare` and `signals`); they sum to `events`.
    public var eventsByType: [EventType: Int] = [:]
    /// Extra copies of valid events.
    public var duplicates = 0
    /// Lines that must be rejected, in total and by kind.
    public var malformed = 0
    public var malformedByKind: [MalformedKind: Int] = [:]
    /// `events + duplicates + malformed`.
    public var lines = 0
    /// Log files written (one per hour; markers not counted).
    public var files = 0
    /// Bytes on disk (compressed when gzip) and bytes of NDJSON before compression.
    public var bytes: Int64 = 0
    public var uncompressedBytes: Int64 = 0
    /// Distinct tracks with at least one valid event.
    public var tracks = 0
    public var hours = 0
    public var start: Hour
    public var seconds = 0.0
    /// Valid unique plays per (track, hour), when `configuration.recordTruth` is set: what an
    /// exact batch run over the generated logs must count as plays.
    public var truth: [TruthKey: Int]?
    /// The net count (the sum of the weights, SPEC §11) of every other signal per (track, hour),
    /// when `configuration.recordTruth` is set: one entry per (track, hour) that has events of the
    /// signal, so a net count may be 0 or negative. Empty for plays-only data.
    public var otherSignalsTruth: [Signal: [TruthKey: Int]]?

    public init(start: Hour) { self.start = start }
}

/// Writes synthetic event logs (plays, and the other signals' events of `SignalMix`) in the
/// `LogLayout` layout.
public enum Generator {
    /// Writes one file per hour of `configuration` under `root` (replacing files of the same
    /// names) but for its `keptHours`, plus the hour's closed marker when `closeHours` is set.
    /// Valid events are the `EventSynthesizer` stream of the seed; duplicates and malformed lines
    /// are interleaved by a separate generator, so the valid events (and the truth) do not depend
    /// on their rates.
    /// `progress` receives the number of valid events written so far, now and then; what it
    /// throws ends the generation (a stop asked for), as a failure to write does: the hour
    /// being written is removed, so that no half-written hour is left to pass for a whole one
    /// (the hours written before it are complete, with their markers).
    public static func generate(_ configuration: GeneratorConfiguration, into root: String,
                                progress: ((Int) throws -> Void)? = nil) throws -> GeneratorSummary {
        try configuration.validate()
        // Refused before the first byte: a data set that cannot fit would only fill the disk.
        let needed = configuration.estimatedBytes
        if let available = FreeSpace.available(at: root), needed + FreeSpace.noRoom > available {
            throw GeneratorError.wouldNotFit(root: root, needed: needed, available: available)
        }
        let began = ContinuousClock.now
        var synthesizer = EventSynthesizer(configuration: configuration)
        var malformedLines = MalformedLineMaker(configuration: configuration, popularity: synthesizer.popularitySampler)
        var placement = SeededRandom(seed: SeededRandom.mix(configuration.seed ^ 0x706C_6163_656D_656E))
        var summary = GeneratorSummary(start: synthesizer.start)
        var tally = TrackTally(tracks: configuration.tracks, recordTruth: configuration.recordTruth)
        var line: [UInt8] = []
        line.reserveCapacity(512)
        var eventsBefore = 0

        for (offset, validCount) in synthesizer.plan.enumerated() {
            let hour = synthesizer.start.advanced(by: Int64(offset))
            // Cumulative rounding makes the totals exact: round(rate × events).
            let duplicateCount = cumulativeShare(configuration.duplicateRate, eventsBefore + validCount)
                - cumulativeShare(configuration.duplicateRate, eventsBefore)
            let malformedCount = cumulativeShare(configuration.malformedRate, eventsBefore + validCount)
                - cumulativeShare(configuration.malformedRate, eventsBefore)
            eventsBefore += validCount

            // A kept hour's events are drawn like the others', then the summary is put back.
            let kept = configuration.keptHours.contains(hour)
            let summaryBefore = summary
            let path = LogLayout.hourFilePath(root: root, hour: hour, gzip: configuration.gzip)
            let writer = kept ? nil : try LogWriter(path: path, gzip: configuration.gzip, append: false,
                                                    gzipLevel: configuration.gzipLevel)
            do {
                var validLeft = validCount, malformedLeft = malformedCount, duplicatesLeft = duplicateCount
                var validIndex = 0
                var deferredCopies: [Int: [[UInt8]]] = [:]   // valid-event index → copies to write after it

                while validLeft + malformedLeft > 0 {
                    // Selection sampling: exact counts, uniformly spread positions.
                    if malformedLeft > 0 && placement.next(below: validLeft + malformedLeft) < malformedLeft {
                        let malformed = malformedLines.makeLine(in: hour)
                        try writer?.write(line: malformed.line)
                        summary.malformedByKind[malformed.kind, default: 0] += 1
                        summary.uncompressedBytes += Int64(malformed.line.count + 1)
                        malformedLeft -= 1
                        continue
                    }
                    line.removeAll(keepingCapacity: true)
                    let event = synthesizer.appendNext(to: &line)!
                    try writer?.write(line: line)
                    summary.uncompressedBytes += Int64(line.count + 1)
                    if !kept { tally.count(event) }

                    if duplicatesLeft > 0 && placement.next(below: validLeft) < duplicatesLeft {
                        duplicatesLeft -= 1
                        summary.uncompressedBytes += Int64(line.count + 1)
                        if validLeft == 1 || placement.next() & 1 == 0 {
                            try writer?.write(line: line)
                        } else {
                            let later = validIndex + 1 + placement.next(below: validLeft - 1)
                            deferredCopies[later, default: []].append(line)
                        }
                    }
                    if !deferredCopies.isEmpty, let copies = deferredCopies.removeValue(forKey: validIndex) {
                        for copy in copies { try writer?.write(line: copy) }
                    }
                    validLeft -= 1
                    validIndex += 1
                    summary.events += 1
                    if !kept && summary.events & 0xFFFF == 0 { try progress?(summary.events) }
                }
            } catch {
                if let writer {
                    try? writer.close()
                    unlink(path)
                }
                throw error
            }
            guard let writer else {
                summary = summaryBefore
                continue
            }
            try writer.close()
            if configuration.closeHours {
                try LogLayout.markClosed(root: root, hour: hour, durable: false)
            }
            tally.finishHour(hour)
            summary.duplicates += duplicateCount
            summary.files += 1
            summary.bytes += writer.fileSize
        }

        try progress?(summary.events)
        summary.malformed = summary.malformedByKind.values.reduce(0, +)
        summary.lines = summary.events + summary.duplicates + summary.malformed
        summary.tracks = tally.distinctTracks
        summary.hours = configuration.hours
        summary.truth = tally.truth
        summary.otherSignalsTruth = tally.otherSignalsTruth
        summary.eventsByType = tally.eventsByType
        let elapsed = ContinuousClock.now - began
        summary.seconds = elapsed.seconds
        return summary
    }

    /// `round(rate × count)`, the number of extra lines due once `count` events are written.
    private static func cumulativeShare(_ rate: Double, _ count: Int) -> Int {
        Int((rate * Double(count)).rounded())
    }
}

/// Counts valid events per track: distinct tracks and events by type always, per-(track, hour)
/// truth on request (plays in arrays, the fewer other events in dictionaries).
private struct TrackTally {
    private var played: [Bool]
    private var thisHour: [Int32]
    private var touched: [Int] = []
    private var byType = [Int](repeating: 0, count: EventType.allCases.count)
    private(set) var distinctTracks = 0
    private(set) var truth: [TruthKey: Int]?
    private(set) var otherSignalsTruth: [Signal: [TruthKey: Int]]?

    init(tracks: Int, recordTruth: Bool) {
        played = [Bool](repeating: false, count: tracks + 1)
        thisHour = recordTruth ? [Int32](repeating: 0, count: tracks + 1) : []
        truth = recordTruth ? [:] : nil
        otherSignalsTruth = recordTruth ? [:] : nil
    }

    var eventsByType: [EventType: Int] {
        Dictionary(uniqueKeysWithValues: EventType.allCases.compactMap { type in
            byType[Int(type.rawValue)] > 0 ? (type, byType[Int(type.rawValue)]) : nil
        })
    }

    @inline(__always)
    mutating func count(_ event: SyntheticEvent) {
        let index = Int(event.trackID)
        if !played[index] {
            played[index] = true
            distinctTracks += 1
        }
        byType[Int(event.type.rawValue)] += 1
        guard truth != nil else { return }
        if event.type == .play {
            if thisHour[index] == 0 { touched.append(index) }
            thisHour[index] += 1
        } else {
            otherSignalsTruth![event.type.signal, default: [:]][TruthKey(trackID: event.trackID, hour: event.hour), default: 0]
                += Int(event.type.weight)
        }
    }

    mutating func finishHour(_ hour: Hour) {
        guard truth != nil else { return }
        for index in touched {
            truth![TruthKey(trackID: Int64(index), hour: hour)] = Int(thisHour[index])
            thisHour[index] = 0
        }
        touched.removeAll(keepingCapacity: true)
    }
}
