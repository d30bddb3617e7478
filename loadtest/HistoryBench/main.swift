// History benchmark (loadtest/bench-history): builds a batch store of long hourly history with
// Zipf popularity through the product's own SQLiteBatchStore, then times the reader's answers on it —
// every answer computed fresh (no snapshot reuse, no cache) — and prints percentiles.
//
//   counterpoint-bench-history build DIR TRACKS DAYS EVENTS_PER_HOUR
//   counterpoint-bench-history bench DIR [QUERIES]
//
// Popularity: half of each hour's plays follow one fixed Zipf ranking of the tracks, the other
// half a Zipf ranking that is reshuffled every week, so rankings of different ranges differ.
// Every play has a listener (one of a million), so each (track, hour) row has a listener sketch.
// Every play names its track's creator (SPEC §11): 10,000 creators of skewed catalogues, the
// largest (creator 1) owning 5,000 tracks, so the store holds each creator's rows as the batch
// writes them. The last six hours are left to the realtime layer, as a live store has them.
import CoreTestSupport
import CounterpointCore
import CounterStore
import Foundation
import Generator

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("counterpoint-bench-history: \(message)\n".utf8))
    exit(2)
}

/// The first hour of the history: 2024-01-01T00:00Z, so a year and three years fit before 2027.
let firstHour = Hour(index: UTCTime.daysFromCivil(year: 2024, month: 1, day: 1) * 24)
let realtimeHours: Int64 = 6

/// Track ids by popularity rank: half of each hour's plays follow the fixed ranking, half a
/// ranking reshuffled every week.
func trackID(rank: Int, tracks: Int, week: Int64, shuffled: Bool) -> Int64 {
    let offset = shuffled ? Int(week % 9973) * 104_729 : 0
    return Int64((rank * 7_919 + offset) % tracks + 1)
}

/// The creators: creator 1 owns tracks 1…5,000, the others the rest, catalogues skewed towards
/// the lower ids (a cube of a uniform draw), as most creators own a few tracks and a few own many.
let creators: Int64 = 10_000
let largestCatalogue: Int64 = 5_000

func creatorID(ofTrack track: Int64) -> Int64 {
    guard track > largestCatalogue else { return 1 }
    var mixed = UInt64(bitPattern: track) &* 0x9E37_79B9_7F4A_7C15
    mixed ^= mixed >> 29
    let uniform = Double(mixed % 1_000_003) / 1_000_003
    return 2 + Int64(uniform * uniform * uniform * Double(creators - 1))
}

/// Every play has a listener, drawn uniformly from a million: a track's listeners are close to
/// its plays, so its sketches are as large as its plays allow.
let listenerPopulation = 1_000_000

func build(directory: String, tracks: Int, days: Int, eventsPerHour: Int) throws {
    let location = StoreLocation(directory: directory)
    let zipf = ZipfSampler(count: tracks, exponent: 1.0)
    var random = SeededRandom(seed: 42)
    let batch = try SQLiteBatchStore(location: location)
    let started = Date()
    let hours = Int64(days) * 24
    let batchEnd = firstHour.advanced(by: hours - realtimeHours)
    var rowsWritten = 0
    var tables = EventTables(keys: 1 << 16, plays: 1 << 16)
    /// The (subject, hour) rows of one hour's plays of each kind, with their listener sketches
    /// (in the same order) and dimension blobs (a creator's: its counts by track) by id.
    func playsOfHour(_ hour: Hour) -> [(kind: SubjectKind, counts: [CountRow], listeners: [EncodedRow], dimensions: [Int64: [UInt8]])] {
        tables.removeAll()
        // A daily rhythm: quiet at 04:00 UTC, busiest at 18:00.
        let hourOfDay = Double(hour.index % 24)
        let events = Int(Double(eventsPerHour) * (0.6 + 0.4 * cos((hourOfDay - 18) / 24 * 2 * .pi)))
        let week = (hour.index - firstHour.index) / (24 * 7)
        for event in 0..<events {
            let track = trackID(rank: zipf.sample(&random), tracks: tracks, week: week, shuffled: event % 2 == 1)
            tables.add(trackID: track, creatorID: creatorID(ofTrack: track), hour: hour, type: .play,
                       PlayDimensions(listenerID: Int64(random.next(below: listenerPopulation))))
        }
        return SubjectKind.allCases.map { kind in
            tables.withTables(of: kind) { tables in
                let dimensions = Dictionary(uniqueKeysWithValues: tables.dimensions.rows().map { ($0.id, $0.encoded) })
                return (kind, Array(tables.counts.sortedElements()), tables.listeners.rows(), dimensions)
            }
        }
    }
    var day = firstHour
    while day < batchEnd {
        let range = HourRange(day, min(batchEnd, day.advanced(by: 24)))
        try batch.replace(ranges: [range], startedAt: 0) { writer in
            for offset in 0..<range.count {
                let hour = range.lower.advanced(by: offset)
                for (kind, rows, sketches, dimensions) in playsOfHour(hour) {
                    for (row, sketch) in zip(rows, sketches) {
                        try writer.write(Subject(kind, row.id), hour: hour, counts: row.counts, dimensions: dimensions[row.id] ?? [],
                                         listenerPlays: sketch.value, listeners: sketch.encoded)
                        if kind == .track { rowsWritten += 1 }
                    }
                }
            }
            return BatchRun(range: range, startedAt: 0, finishedAt: 0, eventsRead: 0, valid: 0, duplicates: 0, rejected: 0,
                            rejectedByReason: [:], tracks: tracks, rows: 0)
        }
        day = range.upper
        if (day.index - firstHour.index) % (24 * 30) == 0 {
            print(String(format: "  %d of %d days, %d rows, %.0f s", (day.index - firstHour.index) / 24, days, rowsWritten,
                         Date().timeIntervalSince(started)))
        }
    }
    let realtime = try SQLiteRealtimeStore(location: location)
    var rows: [[CountRow]] = [[], []]
    var sketches: [[EncodedRow]] = [[], []]
    var blobs: [[EncodedRow]] = [[], []]
    for offset in 0..<realtimeHours {
        let hour = batchEnd.advanced(by: offset)
        for (kind, counts, listeners, dimensions) in playsOfHour(hour) {
            rows[kind.rawValue] += counts
            sketches[kind.rawValue] += listeners
            blobs[kind.rawValue] += dimensions.map { EncodedRow(id: $0.key, hour: hour, encoded: $0.value) }
        }
    }
    _ = try realtime.apply(try SubjectKind.allCases.map {
                               try CounterRows.realtime(rows[$0.rawValue], dimensions: blobs[$0.rawValue], listeners: sketches[$0.rawValue], of: $0)
                           },
                           progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: nil, nextOffset: 1, highWatermark: 1)],
                           flushedAt: Int64(Date().timeIntervalSince1970 * 1000))
    print(String(format: "built %d tracks of %d creators × %d days (%d batch rows of tracks, %d realtime rows) in %.1f s", tracks,
                 creators, days, rowsWritten, rows[0].count, Date().timeIntervalSince(started)))
}

/// Wall time percentiles, and the 99th percentile of the CPU time the answering thread used
/// (on a loaded machine the wall time's tail is mostly waiting for a core).
func printPercentiles(_ name: String, _ samples: [Duration], cpuMilliseconds: [Double]) {
    let sorted = samples.map { Double($0.components.seconds) * 1e3 + Double($0.components.attoseconds) / 1e15 }.sorted()
    let cpu = cpuMilliseconds.sorted()
    func at(_ values: [Double], _ fraction: Double) -> Double { values.isEmpty ? 0 : values[min(values.count - 1, Int(Double(values.count) * fraction))] }
    print(String(format: "%@\n    n=%4d  p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms  (CPU p99 %8.3f ms)", name as NSString, sorted.count,
                 at(sorted, 0.5), at(sorted, 0.99), sorted.last ?? 0, at(cpu, 0.99)))
}

/// CPU time of the calling thread, in milliseconds.
func threadCPUMilliseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
}

func bench(directory: String, queries: Int) throws {
    let reader = try StoreBackend.sqlite(StoreLocation(directory: directory)).openReader()
    let coverage = try reader.coverage()
    guard let covered = coverage.ranges.last, let firstHour = coverage.ranges.first?.lower else {
        fail("\(directory) holds no batch coverage; run build first")
    }
    let end = covered.upper.advanced(by: realtimeHours)
    let spanHours = end.index - firstHour.index
    var random = SeededRandom(seed: 7)
    var cpu: [Double] = []
    func timed<T>(_ body: () throws -> T) rethrows -> (Duration, T) {
        let clock = ContinuousClock()
        var result: T?
        let cpuStart = threadCPUMilliseconds()
        let elapsed = try clock.measure { result = try body() }
        cpu.append(threadCPUMilliseconds() - cpuStart)
        return (elapsed, result!)
    }
    func percentiles(_ name: String, _ samples: [Duration]) {
        printPercentiles(name, samples, cpuMilliseconds: cpu)
        cpu = []
    }
    print("store: \(directory), \(spanHours / 24) days of history, covered \(covered)")

    // Top-100 over random hour-aligned ranges of 7 to 30 days.
    var samples: [Duration] = []
    var depthCheck = 0
    for _ in 0..<queries {
        let length = Int64(24 * 7 + random.next(below: 24 * 23 + 1))
        guard spanHours > length else { break }
        let lower = firstHour.advanced(by: Int64(random.next(below: Int(spanHours - length))))
        let (elapsed, top) = try timed { try reader.top(in: HourRange(lower, lower.advanced(by: length)), limit: 100) }
        samples.append(elapsed)
        depthCheck += top.count
    }
    if !samples.isEmpty { percentiles("top-100, random 7–30 day ranges", samples) }

    if spanHours >= 24 * 366 {
        samples = []
        for _ in 0..<max(10, queries / 10) {
            let length = Int64(24 * 365)
            let lower = firstHour.advanced(by: Int64(random.next(below: Int(spanHours - length))))
            samples.append(try timed { try reader.top(in: HourRange(lower, lower.advanced(by: length)), limit: 100) }.0)
        }
        percentiles("top-100, random one-year ranges", samples)
    }
    samples = (0..<max(10, queries / 10)).map { _ in (try? timed { try reader.top(in: .allTime, limit: 100) }.0) ?? .zero }
    percentiles("top-100, all time", samples)

    // Distinct listeners of a track (`/listeners`) over random 7–30 day ranges and, on a store of
    // a year or more, random one-year ranges: tracks drawn uniformly (most have few plays) and by
    // popularity (the fixed ranking's tracks, whose sketches are the largest).
    let zipf = ZipfSampler(count: 100_000, exponent: 1.0)
    var listenerCheck: Int64 = 0
    var lengths: [(String, () -> Int64)] = [("random 7–30 day ranges", { Int64(24 * 7 + random.next(below: 24 * 23 + 1)) })]
    if spanHours > 24 * 365 { lengths.append(("random one-year ranges", { Int64(24 * 365) })) }
    for (rangeName, length) in lengths {
        for popular in [false, true] {
            samples = []
            var estimates = 0
            for _ in 0..<queries {
                let hours = min(length(), spanHours - 1)
                let lower = firstHour.advanced(by: Int64(random.next(below: Int(spanHours - hours))))
                let track = popular ? trackID(rank: zipf.sample(&random), tracks: 100_000, week: 0, shuffled: false)
                                    : Int64(1 + random.next(below: 100_000))
                let (elapsed, answer) = try timed { try reader.listeners(track: track, in: HourRange(lower, lower.advanced(by: hours))) }
                samples.append(elapsed)
                listenerCheck += answer.listeners
                if !answer.exact { estimates += 1 }
            }
            if !samples.isEmpty {
                percentiles("listeners, \(rangeName), \(popular ? "tracks by popularity" : "uniform tracks") (\(estimates) estimates)", samples)
            }
        }
    }
    if listenerCheck == 0 { print("warning: every listener count was 0 (a store built before listeners? rebuild it)") }

    samples = []
    let threeYears = HourRange(firstHour, firstHour.advanced(by: 24 * (365 * 3 + 1)))
    for _ in 0..<queries {
        let track = Int64(1 + random.next(below: 1_000))
        samples.append(try timed { try reader.timeline(track: track, in: threeYears, step: .day) }.0)
    }
    percentiles("day timeline over 3 years (1,096 points)", samples)

    samples = []
    for _ in 0..<queries {
        let track = Int64(1 + random.next(below: 100_000))
        samples.append(try timed { try reader.plays(track: track, in: .allTime) }.0)
    }
    percentiles("total over all time", samples)
    if depthCheck == 0 { print("warning: every ranking was empty") }

    // Creators (SPEC §11): every signal's counts and a 30-day hour timeline of a creator drawn
    // uniformly, and of the largest catalogue (creator 1, 5,000 tracks); creators ranked.
    var creatorCheck: Int64 = 0
    var tracksRanked = 0
    for (name, pick) in [("uniform creators", { Int64(1 + random.next(below: Int(creators))) }), ("the largest catalogue", { Int64(1) })] {
        samples = []
        for _ in 0..<queries {
            let length = Int64(24 * 7 + random.next(below: 24 * 23 + 1))
            let lower = firstHour.advanced(by: Int64(random.next(below: Int(max(1, spanHours - length)))))
            let creator = pick()
            samples.append(try timed {
                creatorCheck += try reader.counts(.creator(creator), in: HourRange(lower, lower.advanced(by: length))).total.plays
            }.0)
        }
        percentiles("creator counts (every signal), random 7–30 day ranges, \(name)", samples)
        samples = []
        let last30 = HourRange(end.advanced(by: -24 * 30), end)
        for _ in 0..<queries {
            let creator = pick()
            samples.append(try timed { creatorCheck += Int64(try reader.timeline(.creator(creator), in: last30, step: .hour).count) }.0)
        }
        percentiles("creator timeline, last 30 days by hour (720 points), \(name)", samples)
        samples = []
        for _ in 0..<queries {
            // 7 to 90 days, as far as the store's history reaches.
            let length = min(spanHours - 1, Int64(24 * 7 + random.next(below: 24 * 83 + 1)))
            let lower = firstHour.advanced(by: Int64(random.next(below: Int(max(1, spanHours - length)))))
            let creator = pick()
            let (elapsed, tracks) = try timed {
                try reader.tracks(ofCreator: creator, in: HourRange(lower, lower.advanced(by: length)), limit: 100)
            }
            samples.append(elapsed)
            tracksRanked += tracks.count
        }
        percentiles("creator's tracks ranked (100 by plays), random 7–90 day ranges (at most the history), \(name)", samples)
    }
    samples = []
    for _ in 0..<queries {
        let length = Int64(24 * 7 + random.next(below: 24 * 23 + 1))
        guard spanHours > length else { break }
        let lower = firstHour.advanced(by: Int64(random.next(below: Int(spanHours - length))))
        samples.append(try timed { creatorCheck += Int64(try reader.top(.creator, in: HourRange(lower, lower.advanced(by: length)), limit: 100).count) }.0)
    }
    if !samples.isEmpty { percentiles("creators top-100, random 7–30 day ranges", samples) }
    if creatorCheck == 0 { print("warning: no creator counted anything (a store built before creators? rebuild it)") }
    if tracksRanked == 0 { print("warning: no creator's tracks were ranked (a store built before their counts by track? rebuild it)") }
}

let arguments = CommandLine.arguments
do {
    switch arguments.count > 1 ? arguments[1] : "" {
    case "build":
        guard arguments.count == 6, let tracks = Int(arguments[3]), let days = Int(arguments[4]),
              let events = Int(arguments[5]), tracks > 0, days > 1, events > 0
        else { fail("usage: build DIR TRACKS DAYS EVENTS_PER_HOUR") }
        try build(directory: arguments[2], tracks: tracks, days: days, eventsPerHour: events)
    case "bench":
        guard arguments.count >= 3 else { fail("usage: bench DIR [QUERIES]") }
        try bench(directory: arguments[2], queries: arguments.count > 3 ? Int(arguments[3]) ?? 200 : 200)
    default:
        fail("usage: build DIR TRACKS DAYS EVENTS_PER_HOUR | bench DIR [QUERIES]")
    }
} catch {
    fail("\(error)")
}
