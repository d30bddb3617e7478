import CounterpointCore

/// What the synthesizer says about the event whose line it just wrote.
public struct SyntheticEvent: Sendable, Hashable {
    /// The line's `type`: which signal the event counts for, and with what weight.
    public var type: EventType
    public var trackID: Int64
    /// The `creator_id` the line carries, 0 when it carries none.
    public var creatorID: Int64
    public var hour: Hour
    public var occurredAtMilliseconds: Int64
    /// The line's `position_ms` and `duration_ms`, `nil` where it carries none: the waveform
    /// bucket of a play or a comment (`WaveformBucket`).
    public var positionMilliseconds: Int64?
    public var durationMilliseconds: Int64?
}

/// A deterministic stream of valid docs/event-format.md events — plays, and the other signals'
/// events beside them (`SignalMix`) — formatted straight into bytes:
///
/// ```
/// {"event_id":"01KAJ3Z8R0Y7XGQK2M9P0R1S3T","type":"play","track_id":17,"listener_id":48213,
///  "occurred_at":"2026-11-20T12:34:56.789Z","position_ms":0,"duration_ms":215000,"client":"ios","country":"DE",
///  "creator_id":3}
/// ```
///
/// - `event_id` is ULID-shaped: 10 Crockford base-32 characters of the event time, 3 of the
///   stream (15 bits), 13 of `SplitMix64(sequence number ^ seed)`. That finalizer is a bijection, so ids are
///   unique within a stream by construction, not by luck, and streams never collide.
/// - `track_id` is Zipf-distributed over `1…tracks`; everything else is noise shaped like real
///   traffic (`Waveform` below: one duration per track, most plays from the start, many from a
///   few "drops" of each track, some anywhere; 3 clients and 20 countries with a real-world
///   skew; a few events without position, duration, client or country).
/// - Every track has one creator (`Catalogues`), named by `creatorShare` of its events.
/// - `signalShare` of the events are of the other types (`SignalMix`), with the same fields as
///   a play but for the position: a `comment` always sits somewhere on the waveform
///   (`position_ms` and `duration_ms`, `Waveform.commentPosition`), a `comment_deleted` too but
///   for 1 in 8 that carry neither, and the others carry no `position_ms`.
///
/// `appendNext` follows the configuration's schedule (`plan`): hour by hour, events in time
/// order within their hour. `appendEvent(occurredAtMilliseconds:)` makes one event at any time,
/// for live demo traffic. Both draw from the same generator, so the stream depends only on the
/// seed and the order of calls.
public struct EventSynthesizer {
    public let configuration: GeneratorConfiguration
    public let start: Hour
    /// Valid events per hour, from `start` (see `DailyRhythm`).
    public let plan: [Int]

    private let popularity: ZipfSampler
    /// Shared with the generator's malformed-line stream, so the CDF is built once.
    var popularitySampler: ZipfSampler { popularity }
    private let catalogues: Catalogues?
    /// Events naming their creator, of 256.
    private let creatorShare256: UInt64
    private let signalMix: SignalMix
    private var random: SeededRandom
    private let streamTag: UInt64
    private var sequence: UInt64 = 0
    private var plannedHour = 0
    private var indexInHour = 0
    private var datePrefix = DatePrefix()

    /// `stream` (0…32767) separates independent event streams of one seed (the generator's
    /// malformed lines use stream 1) so that their ids cannot collide.
    public init(configuration: GeneratorConfiguration, stream: UInt16 = 0) {
        self.init(configuration: configuration, stream: stream,
                  popularity: ZipfSampler(count: configuration.tracks, exponent: configuration.popularitySkew))
    }

    init(configuration: GeneratorConfiguration, stream: UInt16, popularity: ZipfSampler) {
        self.configuration = configuration
        start = configuration.resolvedStart()
        plan = DailyRhythm.eventsPerHour(total: configuration.events, start: start, hours: configuration.hours)
        self.popularity = popularity
        let creators = configuration.resolvedCreators
        catalogues = creators > 0 ? Catalogues(creators: creators, skew: configuration.catalogueSkew, seed: configuration.seed) : nil
        creatorShare256 = UInt64((configuration.creatorShare * 256).rounded())
        signalMix = configuration.signalMix
        random = SeededRandom(seed: SeededRandom.mix(configuration.seed ^ (UInt64(stream) << 48)))
        precondition(stream < 0x8000, "stream numbers have 15 bits")
        streamTag = (UInt64(stream) ^ (SeededRandom.mix(configuration.seed) >> 49)) & 0x7FFF
    }

    /// Appends the next scheduled event (without `\n`) to `line`; `nil` once all
    /// `configuration.events` have been made.
    public mutating func appendNext(to line: inout [UInt8]) -> SyntheticEvent? {
        while plannedHour < plan.count && indexInHour == plan[plannedHour] {
            plannedHour += 1
            indexInHour = 0
        }
        guard plannedHour < plan.count else { return nil }
        // Stratified times: the i-th of n events lies in the i-th n-th of the hour, so the
        // schedule is in time order without sorting.
        let count = Int64(plan[plannedHour])
        let offset = (Int64(indexInHour) * 3_600_000 + Int64(random.next(below: 3_600_000))) / count
        let hourStart = start.advanced(by: Int64(plannedHour)).epochSeconds * 1000
        indexInHour += 1
        return appendEvent(occurredAtMilliseconds: hourStart + offset, to: &line)
    }

    /// The next scheduled event as a new array.
    public mutating func next() -> (line: [UInt8], event: SyntheticEvent)? {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        return appendNext(to: &line).map { (line, $0) }
    }

    /// Appends one event at `occurredAtMilliseconds` (without `\n`) to `line`.
    public mutating func appendEvent(occurredAtMilliseconds time: Int64, to line: inout [UInt8]) -> SyntheticEvent {
        let trackID = Int64(popularity.sample(&random))
        let listenerID = Int64(random.next(below: configuration.listeners) + 1)
        let waveform = Waveform(trackID: trackID, seed: configuration.seed)
        let choice = random.next()
        let shape = random.next()
        let client = Self.clients[Int((choice >> 40) % UInt64(Self.clients.count))]
        let country = Self.countries[Int(choice >> 58)]
        // Of 256ths: 5 without position, 3 without duration, 4 without client, 6 without country.
        var hasPosition = shape & 0xFF >= 5
        var hasDuration = shape >> 8 & 0xFF >= 3
        let hasClient = shape >> 16 & 0xFF >= 4
        let hasCountry = shape >> 24 & 0xFF >= 6
        let creatorID = shape >> 32 & 0xFF < creatorShare256 ? catalogues?.creator(of: trackID) ?? 0 : 0
        // Bits 40…55: the type, of 65,536ths (`SignalMix`); bits 56…58: whether a deleted
        // comment still carries its position (7 in 8).
        let type = signalMix.type(draw: shape >> 40 & 0xFFFF)
        let positionMilliseconds: Int64
        switch type {
        case .play:
            positionMilliseconds = waveform.position(choice: choice)
        case .comment:
            positionMilliseconds = waveform.commentPosition(choice: choice)
            hasPosition = true
            hasDuration = true
        case .commentDeleted:
            positionMilliseconds = waveform.commentPosition(choice: choice)
            hasPosition = shape >> 56 & 7 != 0
            hasDuration = hasPosition
        default:
            positionMilliseconds = 0
            hasPosition = false
        }
        let eventSequence = sequence
        sequence += 1
        let hour = Hour(epochMilliseconds: time)
        if datePrefix.hour != hour { datePrefix = DatePrefix(hour) }

        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { scratch in
            var out = ByteCursor(scratch.baseAddress!)
            out.append(#"{"event_id":""#)
            out.appendCrockford(UInt64(time), digits: 10)
            out.appendCrockford(streamTag, digits: 3)
            out.appendCrockford(SeededRandom.mix(eventSequence ^ configuration.seed), digits: 13)
            out.append(#"","type":""#)
            out.append(Self.typeNames[Int(type.rawValue)])
            out.append(#"","track_id":"#)
            out.appendDecimal(trackID)
            out.append(#","listener_id":"#)
            out.appendDecimal(listenerID)
            out.append(#","occurred_at":""#)
            out.append(datePrefix.bytes)
            let withinHour = time - hour.epochSeconds * 1000
            out.appendDigits(withinHour / 60_000, width: 2)
            out.appendByte(UInt8(ascii: ":"))
            out.appendDigits(withinHour / 1000 % 60, width: 2)
            out.appendByte(UInt8(ascii: "."))
            out.appendDigits(withinHour % 1000, width: 3)
            out.append(#"Z""#)
            if hasPosition {
                out.append(#","position_ms":"#)
                out.appendDecimal(positionMilliseconds)
            }
            if hasDuration {
                out.append(#","duration_ms":"#)
                out.appendDecimal(waveform.durationMilliseconds)
            }
            if hasClient {
                out.append(#","client":""#)
                out.append(client)
                out.appendByte(UInt8(ascii: "\""))
            }
            if hasCountry {
                out.append(#","country":""#)
                out.append(country)
                out.appendByte(UInt8(ascii: "\""))
            }
            // Last: the parser tries it after `country`, so events without it pay nothing.
            if creatorID != 0 {
                out.append(#","creator_id":"#)
                out.appendDecimal(creatorID)
            }
            out.appendByte(UInt8(ascii: "}"))
            line.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: out.count))
        }
        return SyntheticEvent(type: type, trackID: trackID, creatorID: creatorID, hour: hour, occurredAtMilliseconds: time,
                              positionMilliseconds: hasPosition ? positionMilliseconds : nil,
                              durationMilliseconds: hasDuration ? waveform.durationMilliseconds : nil)
    }

    /// `EventType.nameBytes` of each type, by raw value.
    private static let typeNames: [StaticString] = EventType.allCases.map(\.nameBytes)

    /// 45% ios, 40% android, 15% web, in twentieths.
    private static let clients: [StaticString] =
        Array(repeating: "ios", count: 9) + Array(repeating: "android", count: 8) + Array(repeating: "web", count: 3)

    /// 64 slots, so six random bits pick a country with a rough real-world skew.
    private static let countries: [StaticString] = {
        let weighted: [(StaticString, Int)] = [
            ("US", 15), ("GB", 6), ("DE", 6), ("BR", 5), ("FR", 4), ("MX", 3), ("JP", 3), ("SE", 3),
            ("NL", 2), ("CA", 2), ("AU", 2), ("ES", 2), ("IT", 2), ("PL", 2), ("IN", 2), ("NG", 1),
            ("ZA", 1), ("KR", 1), ("AR", 1), ("NO", 1),
        ]
        let table = weighted.flatMap { Array(repeating: $0.0, count: $0.1) }
        precondition(table.count == 64)
        return table
    }()
}

/// Which creator owns each track: drawn once per track from a Zipf law over `1…creators`, from
/// the track id and the seed alone, so that a track keeps its creator in every stream and run.
struct Catalogues {
    private let sampler: ZipfSampler
    private let seed: UInt64

    init(creators: Int, skew: Double, seed: UInt64) {
        sampler = ZipfSampler(count: creators, exponent: skew)
        self.seed = SeededRandom.mix(seed ^ 0x4352_4541_544F_52)
    }

    @inline(__always)
    func creator(of trackID: Int64) -> Int64 {
        var random = SeededRandom(seed: UInt64(bitPattern: trackID) ^ seed)
        return Int64(sampler.sample(&random))
    }
}

/// The shape of one track's waveform plays: its duration and three "drops" (the moments
/// listeners skip to), fixed per track and seed, so that its histogram has a story to tell.
struct Waveform {
    let durationMilliseconds: Int64
    let drops: (Int64, Int64, Int64)

    init(trackID: Int64, seed: UInt64) {
        let bits = SeededRandom.mix(UInt64(bitPattern: trackID) ^ SeededRandom.mix(seed ^ 0x5745_5645))
        let duration = 30_000 + Int64(bits % 450_000)
        durationMilliseconds = duration
        // Drops between 15% and 90% of the track, from three 10-bit fields of the same bits.
        func drop(_ shift: UInt64) -> Int64 {
            duration * (150 + Int64((bits >> shift) & 1023) * 750 / 1024) / 1000
        }
        drops = (drop(20), drop(30), drop(40))
    }

    /// Of 256ths of `choice`'s low byte: 55% from the start, 25% within a few seconds after one
    /// of the drops, 20% anywhere (up to the last millisecond).
    func position(choice: UInt64) -> Int64 {
        let kind = choice & 0xFF
        if kind < 141 { return 0 }
        let jitter = Int64((choice >> 8) % 8_000)
        if kind < 205 {
            let which = (choice >> 24) % 3
            let drop = which == 0 ? drops.0 : which == 1 ? drops.1 : drops.2
            return min(durationMilliseconds - 1, drop + jitter)
        }
        return Int64((choice >> 8) % UInt64(durationMilliseconds))
    }

    /// Where a comment sits, of 256ths of `choice`'s low byte: half within a few seconds after
    /// one of the drops (what listeners comment on), half anywhere; never past the last
    /// millisecond.
    func commentPosition(choice: UInt64) -> Int64 {
        let jitter = Int64((choice >> 8) % 8_000)
        if choice & 0xFF < 128 {
            let which = (choice >> 24) % 3
            let drop = which == 0 ? drops.0 : which == 1 ? drops.1 : drops.2
            return min(durationMilliseconds - 1, drop + jitter)
        }
        return Int64((choice >> 8) % UInt64(durationMilliseconds))
    }
}

/// `YYYY-MM-DDTHH:` of one hour, formatted once per hour rather than once per event.
private struct DatePrefix {
    var hour: Hour?
    var bytes: [UInt8] = []

    init() {}

    init(_ hour: Hour) {
        self.hour = hour
        UTCTime.append(epochSeconds: hour.epochSeconds, to: &bytes)   // YYYY-MM-DDTHH:00:00Z
        bytes.removeLast(6)
    }
}

/// Writes bytes through a raw pointer into a buffer known to be large enough (the callers
/// bound their output well below its capacity).
struct ByteCursor {
    private let base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0

    init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

    @inline(__always)
    mutating func appendByte(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        (base + count).update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        count += text.utf8CodeUnitCount
    }

    @inline(__always)
    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { (base + count).update(from: $0.baseAddress!, count: $0.count) }
        count += bytes.count
    }

    /// A non-negative integer in decimal.
    @inline(__always)
    mutating func appendDecimal(_ value: Int64) {
        var digits = 1
        var limit: Int64 = 10
        while value >= limit && digits < 19 { digits += 1; limit = limit &* 10 }
        appendDigits(value, width: digits)
    }

    /// Exactly `width` decimal digits, zero-padded.
    @inline(__always)
    mutating func appendDigits(_ value: Int64, width: Int) {
        var rest = value
        var index = count + width - 1
        while index >= count {
            base[index] = UInt8(truncatingIfNeeded: rest % 10) &+ UInt8(ascii: "0")
            rest /= 10
            index -= 1
        }
        count += width
    }

    /// The low `5 × digits` bits of `value` in Crockford base 32, most significant first.
    @inline(__always)
    mutating func appendCrockford(_ value: UInt64, digits: Int) {
        for index in 0..<digits {
            let shift = UInt64(5 * (digits - 1 - index))
            let digit = shift >= 64 ? 0 : Int((value >> shift) & 31)
            base[count + index] = crockfordDigits[digit]
        }
        count += digits
    }
}

private let crockfordDigits: [UInt8] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
