import CounterpointCore
import EventLogs
import Foundation
import Generator
import Patience
import Runtime
import Scratch
import Testing

@Suite("Generator", .onTestThreads)
struct GeneratorTests {
    /// 2026-11-20T00:00:00Z: a fixed start, so the data does not depend on the clock.
    static let start = Hour(epochSeconds: 1_795_132_800)

    static func configuration(events: Int = 5_000, hours: Int = 6, duplicates: Double = 0.1,
                              malformed: Double = 0.05, seed: UInt64 = 42) -> GeneratorConfiguration {
        var configuration = GeneratorConfiguration()
        configuration.events = events
        configuration.tracks = 500
        configuration.listeners = 1_000
        configuration.start = start
        configuration.hours = hours
        configuration.duplicateRate = duplicates
        configuration.malformedRate = malformed
        configuration.seed = seed
        configuration.recordTruth = true
        return configuration
    }

    @Test("the same seed writes the same bytes, plain and gzip; another seed does not")
    func deterministic() throws {
        for gzip in [false, true] {
            var configuration = Self.configuration(events: 3_000)
            configuration.gzip = gzip
            let first = try TemporaryDirectory(), second = try TemporaryDirectory(), other = try TemporaryDirectory()
            _ = try Generator.generate(configuration, into: first.path)
            _ = try Generator.generate(configuration, into: second.path)
            configuration.seed += 1
            _ = try Generator.generate(configuration, into: other.path)
            let firstContents = try first.contents()
            #expect(firstContents.count == 12)   // 6 hour files and 6 markers
            #expect(firstContents == (try second.contents()))
            #expect(firstContents != (try other.contents()))
        }
    }

    @Test("kept hours are left as they are, and every other hour holds the bytes it holds without them")
    func keptHours() throws {
        let full = try TemporaryDirectory(), partial = try TemporaryDirectory()
        let fullSummary = try Generator.generate(Self.configuration(), into: full.path)
        let kept: Set<Hour> = [Self.start.advanced(by: 1), Self.start.advanced(by: 4)]
        let earlier = LogLayout.hourFilePath(root: partial.path, hour: Self.start.advanced(by: 1), segment: "p3")
        try FileManager.default.createDirectory(atPath: LogLayout.dayDirectory(root: partial.path, hour: Self.start),
                                                withIntermediateDirectories: true)
        try Data("an earlier run's plays\n".utf8).write(to: URL(fileURLWithPath: earlier))

        var configuration = Self.configuration()
        configuration.keptHours = kept
        let summary = try Generator.generate(configuration, into: partial.path)

        var expected = try full.contents().filter { path, _ in
            let hour = LogLayout.parse(relativePath: path)?.hour ?? LogLayout.parseClosedMarker(relativePath: path)
            return !kept.contains(hour!)
        }
        expected[String(earlier.dropFirst(partial.path.count + 1))] = Data("an earlier run's plays\n".utf8)
        #expect(try partial.contents() == expected)
        let truth = fullSummary.truth!.filter { !kept.contains($0.key.hour) }
        #expect(summary.truth == truth)
        #expect(summary.events == truth.values.reduce(0, +) && summary.events < fullSummary.events)
        #expect(summary.files == 4)
        // The census reads the earlier run's line too.
        #expect(summary.lines == (try LogCensus(root: partial.path).lines) - 1)
    }

    @Test("valid events, duplicates and malformed lines are exactly as many as the summary says")
    func exactCounts() throws {
        let root = try TemporaryDirectory()
        let configuration = Self.configuration()
        var lastProgress = 0
        let summary = try Generator.generate(configuration, into: root.path) { lastProgress = $0 }
        let census = try LogCensus(root: root.path)

        #expect(summary.events == 5_000 && census.validUnique == 5_000)
        #expect(summary.duplicates == 500 && census.duplicates == 500)
        #expect(summary.malformed == 250 && census.rejected.count == 250)
        #expect(summary.malformedByKind.values.reduce(0, +) == 250)
        #expect(summary.lines == 5_750 && census.lines == 5_750)
        #expect(summary.files == 6 && census.inventory.files.count == 6)
        #expect(summary.hours == 6 && summary.start == Self.start)
        #expect(summary.bytes == census.inventory.totalBytes)
        #expect(summary.uncompressedBytes == summary.bytes)
        #expect(summary.tracks == Set(census.perTrack.keys).count)
        #expect(lastProgress == 5_000)
        #expect(census.inventory.closedHours == (0..<6).map { Self.start.advanced(by: Int64($0)) })
        #expect(census.eventsOutsideTheirFileHour == 0)
        #expect(census.eventsOutOfTimeOrder == 0)
    }

    @Test("the recorded truth is what an exact count of the files finds, and sums to the events")
    func truth() throws {
        let root = try TemporaryDirectory()
        let summary = try Generator.generate(Self.configuration(), into: root.path)
        let census = try LogCensus(root: root.path)
        #expect(summary.truth == census.truth)
        #expect(summary.truth?.values.reduce(0, +) == 5_000)
    }

    @Test("valid events do not depend on the duplicate and malformed rates")
    func validEventsIndependentOfNoise() throws {
        let clean = try TemporaryDirectory(), noisy = try TemporaryDirectory()
        let cleanSummary = try Generator.generate(Self.configuration(duplicates: 0, malformed: 0), into: clean.path)
        let noisySummary = try Generator.generate(Self.configuration(duplicates: 0.3, malformed: 0.2), into: noisy.path)
        #expect(cleanSummary.truth == noisySummary.truth)
        #expect(Set(try LogCensus(root: clean.path).firstLineOfID.keys) == Set(try LogCensus(root: noisy.path).firstLineOfID.keys))
    }

    @Test("every valid line is a docs/event-format.md play event with a ULID-shaped id, about 200 bytes long")
    func eventShape() throws {
        let root = try TemporaryDirectory()
        let summary = try Generator.generate(Self.configuration(duplicates: 0, malformed: 0), into: root.path)
        let census = try LogCensus(root: root.path)
        #expect(census.rejected.isEmpty)
        let ulidCharacters = Set("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
        var waveformStarts = 0
        var withoutDuration = 0
        var withoutCountry = 0
        for (eventID, first) in census.firstLineOfID {
            let event = try #require(checkEvent(first.bytes))
            #expect(eventID.utf8.count == 26 && eventID.utf8.allSatisfy(ulidCharacters.contains))
            #expect((1...500).contains(event.trackID))
            #expect((1...1_000).contains(event.object["listener_id"] as! Int))
            let duration = event.object["duration_ms"] as? Int, position = event.object["position_ms"] as? Int
            if let duration, let position { #expect(position >= 0 && position < duration) }
            if duration == nil { withoutDuration += 1 }
            if position == 0 { waveformStarts += 1 }
            if let client = event.object["client"] { #expect(["ios", "android", "web"].contains(client as! String)) }
            if let country = event.object["country"] {
                #expect((country as! String).range(of: "^[A-Z]{2}$", options: .regularExpression) != nil)
            } else {
                withoutCountry += 1
            }
            #expect((event.object["occurred_at"] as! String).range(
                of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil)
        }
        // 55% start at 0; about 1% lack a duration and 2% a country.
        #expect(waveformStarts > 5_000 * 5 / 10 && waveformStarts < 5_000 * 6 / 10)
        #expect(withoutDuration > 10 && withoutDuration < 150)
        #expect(withoutCountry > 40 && withoutCountry < 200)
        let averageLine = Double(summary.bytes) / Double(summary.lines)
        #expect(averageLine > 185 && averageLine < 250)
    }

    @Test("every track has one creator, catalogue sizes fall off as Zipf says, and about 97% of events name the creator")
    func creators() throws {
        let root = try TemporaryDirectory()
        var configuration = Self.configuration(events: 40_000, hours: 2, duplicates: 0, malformed: 0)
        configuration.tracks = 10_000
        configuration.creators = 200
        _ = try Generator.generate(configuration, into: root.path)
        let census = try LogCensus(root: root.path)
        var creatorOfTrack: [Int64: Int64] = [:]
        var naming = 0
        for (_, first) in census.firstLineOfID {
            let event = try #require(checkEvent(first.bytes))
            guard let creator = (event.object["creator_id"] as? NSNumber)?.int64Value else { continue }
            naming += 1
            #expect((1...200).contains(creator))
            #expect(creatorOfTrack.updateValue(creator, forKey: event.trackID) ?? creator == creator, "track \(event.trackID)")
            #expect(parsedCreator(first.bytes) == creator)
        }
        #expect(abs(Double(naming) / 40_000 - 248.0 / 256) < 0.005)
        // Catalogues: creator 1 owns the most of the tracks seen, about its Zipf(1) share.
        let catalogue = Dictionary(grouping: creatorOfTrack.keys) { creatorOfTrack[$0]! }.mapValues(\.count)
        let largest = catalogue.max { $0.value < $1.value }!
        #expect(largest.key == 1)
        let expectedShare = ZipfSampler(count: 200, exponent: 1.0).probability(of: 1)
        #expect(abs(Double(largest.value) / Double(creatorOfTrack.count) - expectedShare) < 0.03)
        // Most creators own a few tracks, a few own many: the median catalogue is a small fraction of the largest.
        let sizes = catalogue.values.sorted()
        #expect(sizes[sizes.count / 2] * 20 < largest.value)
        // Without creators, no event names one.
        configuration.creators = 0
        let none = try TemporaryDirectory()
        _ = try Generator.generate(configuration, into: none.path)
        #expect(try LogCensus(root: none.path).firstLineOfID.values.allSatisfy { !String(decoding: $0.bytes, as: UTF8.self).contains("creator_id") })
    }

    private func parsedCreator(_ line: [UInt8]) -> Int64? {
        guard case .success(let event) = EventParser.parse(line) else { return nil }
        return event.creatorID
    }

    @Test("duplicates are sometimes adjacent to their original and sometimes far from it")
    func duplicatePlacement() throws {
        let root = try TemporaryDirectory()
        _ = try Generator.generate(Self.configuration(duplicates: 0.2, malformed: 0), into: root.path)
        let distances = try LogCensus(root: root.path).duplicateDistances
        #expect(distances.count == 1_000)
        #expect(distances.filter { $0 == 1 }.count > 300)
        #expect(distances.filter { $0 > 100 }.count > 200)
    }

    @Test("every kind of malformed line appears, and each is rejected by an independent check of docs/event-format.md")
    func malformedKinds() throws {
        let root = try TemporaryDirectory()
        let summary = try Generator.generate(Self.configuration(events: 2_000, duplicates: 0, malformed: 1.0), into: root.path)
        let census = try LogCensus(root: root.path)
        #expect(census.rejected.count == 2_000 && summary.malformed == 2_000)
        for kind in MalformedKind.allCases {
            #expect(summary.malformedByKind[kind, default: 0] > 0, "\(kind)")
        }
        let oversized = census.rejected.filter { $0.count > EventLimits.maxEventBytes }
        #expect(oversized.count == summary.malformedByKind[.oversized])
        let nonUTF8 = census.rejected.filter { String(validating: $0, as: UTF8.self) == nil }
        #expect(nonUTF8.count == summary.malformedByKind[.invalidUTF8])
        #expect(census.validUnique == 2_000)
    }

    @Test("track 1 is the most played and plays fall off with rank as Zipf says")
    func popularitySkew() throws {
        let root = try TemporaryDirectory()
        var configuration = Self.configuration(events: 40_000, hours: 2, duplicates: 0, malformed: 0)
        configuration.tracks = 10_000
        _ = try Generator.generate(configuration, into: root.path)
        let perTrack = try LogCensus(root: root.path).perTrack
        let ranked = perTrack.sorted { $0.value > $1.value }
        #expect(ranked.first?.key == 1)
        #expect(perTrack[1, default: 0] > perTrack[2, default: 0])
        #expect(perTrack[2, default: 0] > perTrack[10, default: 0])
        // Zipf(1.1) over 10,000 ranks gives track 1 about 12% of the plays.
        let expectedShare = ZipfSampler(count: 10_000, exponent: 1.1).probability(of: 1)
        let share = Double(perTrack[1, default: 0]) / 40_000
        #expect(abs(share - expectedShare) < 0.01)
    }

    @Test("events follow a daily rhythm: the 20:00 peak has three times the events of the 08:00 trough")
    func dailyRhythm() throws {
        let root = try TemporaryDirectory()
        _ = try Generator.generate(Self.configuration(events: 24_000, hours: 24, duplicates: 0, malformed: 0), into: root.path)
        let perHour = try LogCensus(root: root.path).perHour
        let counts = (0..<24).map { perHour[Self.start.advanced(by: Int64($0)), default: 0] }
        #expect(counts.firstIndex(of: counts.max()!) == 20)
        #expect(counts.firstIndex(of: counts.min()!) == 8)
        let ratio = Double(counts.max()!) / Double(counts.min()!)
        #expect(ratio > 2.9 && ratio < 3.1)
    }

    @Test("the hourly split sums exactly to the total for any total", arguments: [0, 1, 7, 1_000, 999_999])
    func exactSplit(total: Int) {
        for hours in [1, 5, 48] {
            let counts = DailyRhythm.eventsPerHour(total: total, start: Self.start.advanced(by: 3), hours: hours)
            #expect(counts.count == hours && counts.reduce(0, +) == total && counts.allSatisfy { $0 >= 0 })
        }
    }

    @Test("gzip output holds the same lines as plain output and no closed markers when asked")
    func gzipMatchesPlain() throws {
        let plain = try TemporaryDirectory(), gzipped = try TemporaryDirectory()
        var configuration = Self.configuration(events: 2_000)
        _ = try Generator.generate(configuration, into: plain.path)
        configuration.gzip = true
        configuration.closeHours = false
        let summary = try Generator.generate(configuration, into: gzipped.path)
        let inventory = try LogDiscovery.inventory(of: [gzipped.path])
        #expect(inventory.files.allSatisfy { $0.isGzip && $0.path.hasSuffix(".ndjson.gz") })
        #expect(inventory.closedHours.isEmpty)
        #expect(summary.bytes < summary.uncompressedBytes / 3)
        let plainLines = try LogCensus(root: plain.path)
        let gzipLines = try LogCensus(root: gzipped.path)
        #expect(plainLines.truth == gzipLines.truth && plainLines.lines == gzipLines.lines)
    }

    @Test("the synthesizer's stream is reproducible, unique by id and in time order, with live events on demand")
    func synthesizer() throws {
        var configuration = Self.configuration(events: 1_000, hours: 3)
        configuration.tracks = 50
        var first = EventSynthesizer(configuration: configuration)
        var second = EventSynthesizer(configuration: configuration)
        var ids = Set<String>()
        var previous = Int64.min
        var produced = 0
        while let (line, event) = first.next() {
            #expect(second.next()?.line == line)
            let checked = try #require(checkEvent(line))
            #expect(checked.trackID == event.trackID && checked.occurredAtMilliseconds == event.occurredAtMilliseconds)
            #expect(event.hour == Hour(epochMilliseconds: event.occurredAtMilliseconds))
            #expect(event.occurredAtMilliseconds >= previous)
            previous = event.occurredAtMilliseconds
            ids.insert(checked.eventID)
            produced += 1
        }
        #expect(produced == 1_000 && ids.count == 1_000)
        #expect(first.plan.reduce(0, +) == 1_000)

        var line: [UInt8] = []
        let now: Int64 = 1_795_180_000_123
        let live = first.appendEvent(occurredAtMilliseconds: now, to: &line)
        #expect(live.hour == Hour(epochMilliseconds: now))
        #expect(checkEvent(line)?.occurredAtMilliseconds == now)
        #expect(!ids.contains(checkEvent(line)!.eventID))
    }

    @Test("an invalid configuration is rejected before anything is written")
    func invalidConfiguration() throws {
        let root = try TemporaryDirectory()
        var configuration = Self.configuration()
        configuration.duplicateRate = 1.5
        #expect(throws: GeneratorError.invalidConfiguration("duplicate rate must be between 0 and 1")) {
            try Generator.generate(configuration, into: root.path)
        }
        configuration = Self.configuration()
        configuration.tracks = 0
        #expect(throws: GeneratorError.self) { try Generator.generate(configuration, into: root.path) }
        configuration = Self.configuration()
        configuration.start = Hour(epochSeconds: 0)
        #expect(throws: GeneratorError.self) { try Generator.generate(configuration, into: root.path) }
        #expect(try root.contents().isEmpty)
    }

    @Test("the default start ends the generated hours at the current hour")
    func defaultStart() {
        var configuration = GeneratorConfiguration()
        configuration.hours = 5
        configuration.clock = .fixed(atEpochMilliseconds: 1_795_180_000_000)
        #expect(configuration.resolvedStart() == Hour(epochSeconds: 1_795_180_000).advanced(by: -5))
    }
}
