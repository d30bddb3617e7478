import CounterpointCore
import EventLogs
import Foundation
import Generator
import Patience
import Scratch
import Testing

@Suite("Generator signal mix", .onTestThreads)
struct SignalMixTests {
    /// FNV-1a (64 bits) of every file below `root`, in path order, path and bytes: a golden
    /// value for "the same bytes", without keeping the bytes.
    static func fingerprint(of root: TemporaryDirectory) throws -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func add(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
        }
        for (path, data) in try root.contents().sorted(by: { $0.key < $1.key }) {
            add(path.utf8)
            add(data)
        }
        return hash
    }

    /// The plays-only data set the golden values below were taken from (on `ee24cf8`, before
    /// the generator wrote any other type): valid events and their duplicates.
    static func goldenConfiguration() -> GeneratorConfiguration {
        var configuration = GeneratorTests.configuration(events: 20_000, hours: 6, duplicates: 0.1, malformed: 0, seed: 7)
        configuration.creators = 40
        return configuration
    }

    @Test("plays-only output is byte for byte what the generator wrote before the signal mix")
    func playsOnlyGolden() throws {
        let root = try TemporaryDirectory()
        _ = try Generator.generate(Self.goldenConfiguration(), into: root.path)
        #expect(try Self.fingerprint(of: root) == 0x5322_2EFD_EB01_31EA)
        var synthesizer = EventSynthesizer(configuration: Self.goldenConfiguration())
        #expect(synthesizer.next().map { String(decoding: $0.line, as: UTF8.self) } ==
            #"{"event_id":"01M7V41F842AQ15BHG4DXHFQRM","type":"play","track_id":3,"listener_id":266,"occurred_at":"2026-11-20T00:00:00.260Z","position_ms":27768,"duration_ms":434399,"client":"ios","country":"US","creator_id":11}"#)
    }

    /// A configuration with the realistic mix of SPEC §11.
    static func mixed(events: Int = 20_000, hours: Int = 4, seed: UInt64 = 42) -> GeneratorConfiguration {
        var configuration = GeneratorTests.configuration(events: events, hours: hours, duplicates: 0, malformed: 0, seed: seed)
        configuration.signalShare = SignalMix.realisticShare
        return configuration
    }

    @Test("the library's default share is 0 (plays only, what the suites that count plays generate); the product's surfaces ask for the realistic mix")
    func defaultIsPlaysOnly() {
        #expect(GeneratorConfiguration.defaultSignalShare == 0)
        #expect(GeneratorConfiguration().signalShare == 0 && GeneratorConfiguration().signals == Set(Signal.allCases))
        #expect(GeneratorConfiguration().signalMix.fraction(of: .play) == 1)
    }

    @Test("with every other signal turned off, any share writes the plays-only bytes")
    func everySignalOffIsPlaysOnly() throws {
        var configuration = Self.goldenConfiguration()
        configuration.signalShare = 0.5
        configuration.signals = [.plays]
        let root = try TemporaryDirectory()
        let summary = try Generator.generate(configuration, into: root.path)
        #expect(try Self.fingerprint(of: root) == 0x5322_2EFD_EB01_31EA)
        #expect(summary.eventsByType == [.play: 20_000])
    }

    @Test("at a share of 0.09 the types take the documented 65,536ths: likes 4 %, unlikes 0.4 %, reposts 1 %, unreposts 0.1 %, comments 1.5 %, deletions 0.2 %, downloads 1.8 %")
    func documentedFractions() {
        let mix = SignalMix(share: 0.09, signals: Set(Signal.allCases))
        let expected: [EventType: Double] = [
            .like: 2_621, .unlike: 263, .repost: 655, .unrepost: 65, .comment: 984, .commentDeleted: 131, .download: 1_179,
            .play: 65_536 - 5_898,
        ]
        for type in EventType.allCases {
            #expect(mix.fraction(of: type) == expected[type]! / 65_536, "\(type)")
        }
        #expect(EventType.allCases.map(mix.fraction(of:)).reduce(0, +) == 1)
        // Every share tiles exactly: the parts add up to the share, to a 65,536th.
        for share in [0.0, 0.01, 0.09, 0.5, 1.0] {
            let mix = SignalMix(share: share, signals: Set(Signal.allCases))
            #expect(abs((1 - mix.fraction(of: .play)) - share) <= 0.5 / 65_536, "\(share)")
        }
    }

    @Test("over 200,000 events each type's share is within a few standard deviations of its configured rate, and every line parses as an event of its type")
    func ratesAndParsing() throws {
        let configuration = Self.mixed(events: 200_000, hours: 8)
        let mix = configuration.signalMix
        var synthesizer = EventSynthesizer(configuration: configuration)
        var counts: [EventType: Int] = [:]
        var mismatches = 0
        while let (line, synthetic) = synthesizer.next() {
            counts[synthetic.type, default: 0] += 1
            guard case .success(let event) = EventParser.parse(line), event.type == synthetic.type,
                  event.trackID == synthetic.trackID, event.creatorID == synthetic.creatorID,
                  event.occurredAtMilliseconds == synthetic.occurredAtMilliseconds,
                  String(decoding: line, as: UTF8.self).contains("\"type\":\"\(synthetic.type.name)\"")
            else {
                mismatches += 1
                continue
            }
        }
        #expect(mismatches == 0)
        #expect(counts.values.reduce(0, +) == 200_000)
        for type in EventType.allCases {
            let rate = mix.fraction(of: type)
            let measured = Double(counts[type, default: 0]) / 200_000
            let deviation = (rate * (1 - rate) / 200_000).squareRoot()
            #expect(abs(measured - rate) < 4 * deviation, "\(type): \(measured) against \(rate)")
        }
        #expect(abs(Double(200_000 - counts[.play, default: 0]) / 200_000 - 0.09) < 0.003)
    }

    @Test("generated logs with the mix are valid to an independent check, type by type, and the summary's truth is what they hold")
    func independentCheckAndTruth() throws {
        let root = try TemporaryDirectory()
        var configuration = Self.mixed()
        configuration.duplicateRate = 0.05
        configuration.malformedRate = 0.05
        let summary = try Generator.generate(configuration, into: root.path)
        let census = try LogCensus(root: root.path)
        #expect(census.validUnique == 20_000 && census.rejected.count == summary.malformed)
        #expect(census.duplicates == summary.duplicates)
        #expect(Dictionary(uniqueKeysWithValues: summary.eventsByType.map { ($0.key.name, $0.value) }) == census.perType)
        #expect(Set(census.perType.keys) == eventTypeNames)
        #expect(summary.truth == census.truth)
        let otherTruth = try #require(summary.otherSignalsTruth)
        #expect(Dictionary(uniqueKeysWithValues: otherTruth.map { ($0.key.rawValue, $0.value) }) == census.otherSignalsTruth)
        #expect(Set(otherTruth.keys) == [.downloads, .likes, .reposts, .comments])
        #expect(otherTruth.values.contains { $0.values.contains { $0 < 0 } })   // retractions count −1
    }

    @Test("comments sit on their track's waveform, most deleted comments too, and the other signals carry no position")
    func commentPositions() throws {
        var configuration = Self.mixed(events: 40_000)
        configuration.signalShare = 0.5   // more comments to look at: about 3,300, and 440 deletions
        var synthesizer = EventSynthesizer(configuration: configuration)
        var durationOfTrack: [Int64: Int64] = [:]
        var comments = 0, commentsAtStart = 0, deletions = 0, deletionsWithout = 0
        while let (line, event) = synthesizer.next() {
            let object = try #require(checkEvent(line)).object
            let position = (object["position_ms"] as? NSNumber)?.int64Value
            let duration = (object["duration_ms"] as? NSNumber)?.int64Value
            #expect(position == event.positionMilliseconds && duration == event.durationMilliseconds)
            if let duration {
                #expect(durationOfTrack.updateValue(duration, forKey: event.trackID) ?? duration == duration)
            }
            switch event.type {
            case .comment:
                comments += 1
                let position = try #require(position), duration = try #require(duration)
                #expect(position >= 0 && position < duration)
                if position == 0 { commentsAtStart += 1 }
            case .commentDeleted:
                deletions += 1
                #expect((position == nil) == (duration == nil))
                if let position, let duration { #expect(position >= 0 && position < duration) } else { deletionsWithout += 1 }
            case .play:
                break
            default:
                #expect(position == nil)
            }
        }
        #expect(comments > 3_000 && commentsAtStart < comments / 100)
        // 1 in 8 deletions carry no position.
        #expect(deletions > 350 && abs(Double(deletionsWithout) / Double(deletions) - 1.0 / 8) < 0.05)
    }

    @Test("turning a signal off writes none of its types, and leaves every other event as it was", arguments: [Signal.downloads, .likes, .reposts, .comments])
    func signalOff(signal: Signal) throws {
        func lines(_ configuration: GeneratorConfiguration) -> [(line: [UInt8], type: EventType)] {
            var synthesizer = EventSynthesizer(configuration: configuration)
            var lines: [(line: [UInt8], type: EventType)] = []
            while let (line, event) = synthesizer.next() { lines.append((line, event.type)) }
            return lines
        }
        let all = lines(Self.mixed())
        var configuration = Self.mixed()
        configuration.signals.remove(signal)
        let without = lines(configuration)
        #expect(all.count == without.count)
        #expect(!without.contains { $0.type.signal == signal })
        #expect(all.contains { $0.type.signal == signal })
        #expect(configuration.signalMix.fraction(of: .like) == (signal == .likes ? 0 : Self.mixed().signalMix.fraction(of: .like)))
        for (before, after) in zip(all, without) where before.type.signal != signal {
            #expect(before.line == after.line)
        }
    }

    @Test("with the mix, the same seed writes the same bytes and another seed does not")
    func deterministicMix() throws {
        var configuration = Self.mixed(events: 5_000)
        configuration.duplicateRate = 0.1
        configuration.malformedRate = 0.05
        let first = try TemporaryDirectory(), second = try TemporaryDirectory(), other = try TemporaryDirectory()
        _ = try Generator.generate(configuration, into: first.path)
        _ = try Generator.generate(configuration, into: second.path)
        configuration.seed += 1
        _ = try Generator.generate(configuration, into: other.path)
        #expect(try Self.fingerprint(of: first) == (try Self.fingerprint(of: second)))
        #expect(try Self.fingerprint(of: first) != (try Self.fingerprint(of: other)))
    }

    @Test("a signal share outside 0…1 is rejected before anything is written", arguments: [-0.01, 1.01, Double.nan])
    func invalidShare(share: Double) throws {
        let root = try TemporaryDirectory()
        var configuration = Self.mixed()
        configuration.signalShare = share
        #expect(throws: GeneratorError.invalidConfiguration("signal share must be between 0 and 1")) {
            try Generator.generate(configuration, into: root.path)
        }
        #expect(try root.contents().isEmpty)
    }
}
