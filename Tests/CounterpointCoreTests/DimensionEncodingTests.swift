import Patience
import Testing
import CoreTestSupport
@testable import CounterpointCore

/// The stored form of dimension counts and its merging, checked against plain dictionaries.
@Suite("Dimension encoding and aggregation", .onTestThreads)
struct DimensionEncodingTests {
    /// The reference: counts by (section, key) as plain dictionaries.
    struct Reference: Equatable {
        var waveform: [Int: Int64] = [:]
        var countries: [String: Int64] = [:]
        var clients: [String: Int64] = [:]
        /// Net comments per bucket (SPEC §11), negative where deletions outnumber comments.
        var comments: [Int: Int64] = [:]

        mutating func add(_ other: Reference, sign: Int64 = 1) {
            for (key, count) in other.waveform { waveform[key, default: 0] += sign * count }
            for (key, count) in other.countries { countries[key, default: 0] += sign * count }
            for (key, count) in other.clients { clients[key, default: 0] += sign * count }
            for (key, count) in other.comments { comments[key, default: 0] += sign * count }
            waveform = waveform.filter { $0.value != 0 }
            countries = countries.filter { $0.value != 0 }
            clients = clients.filter { $0.value != 0 }
            comments = comments.filter { $0.value != 0 }
        }

        init() {}

        init(_ totals: DimensionTotals) {
            for (bucket, count) in totals.waveform.enumerated() where count != 0 { waveform[bucket] = count }
            for (value, count) in totals.countries { countries[value.string] = count }
            for (value, count) in totals.clients { clients[value.string] = count }
            for (bucket, count) in totals.commentsWaveform.enumerated() where count != 0 { comments[bucket] = count }
        }

        var encoded: [UInt8] {
            var out: [UInt8] = []
            let sortedBytes = { (map: [String: Int64]) in
                map.map { (value: DimensionValue($0.key)!, count: $0.value) }.sorted { $0.value.bytes.lexicographicallyPrecedes($1.value.bytes) }
            }
            DimensionEncoding.encode(waveform: waveform.sorted { $0.key < $1.key }.map { (bucket: $0.key, count: $0.value) },
                                     countries: sortedBytes(countries), clients: sortedBytes(clients),
                                     commentsWaveform: comments.sorted { $0.key < $1.key }.map { (bucket: $0.key, count: $0.value) }, into: &out)
            return out
        }
    }

    static let names = ["", "DE", "US", "ios", "android", "web", "D", "DEU", "\u{0}", "é", String(repeating: "z", count: 32)]

    static func randomReference(_ random: inout some RandomNumberGenerator) -> Reference {
        var reference = Reference()
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            reference.waveform[Int.random(in: 0..<100, using: &random)] = Int64.random(in: 1...5_000_000_000, using: &random)
        }
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            reference.countries[names.randomElement(using: &random)!] = Int64.random(in: 1...300, using: &random)
        }
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            reference.clients[names.randomElement(using: &random)!] = Int64.random(in: 1...70, using: &random)
        }
        // Half the blobs have no comments (and so the three sections of plays alone).
        for _ in 0..<(Bool.random(using: &random) ? 0 : Int.random(in: 1...6, using: &random)) {
            reference.comments[Int.random(in: 0..<100, using: &random)] = Int64.random(in: -300...300, using: &random) | 1
        }
        return reference
    }

    @Test("encoding then decoding gives back every count; no counts is the empty blob")
    func roundTrip() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let reference = Self.randomReference(&random)
            let decoded = try #require(DimensionEncoding.decode(reference.encoded))
            #expect(Reference(decoded) == reference)
        }
        #expect(Reference().encoded.isEmpty)
    }

    @Test("merging adds counts entry by entry, subtracting takes them away, zeros disappear")
    func mergeMatchesDictionaries() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let a = Self.randomReference(&random), b = Self.randomReference(&random)
            var sum = a
            sum.add(b)
            let merged = try #require(DimensionEncoding.merged(a.encoded, b.encoded))
            #expect(Reference(try #require(DimensionEncoding.decode(merged))) == sum)
            #expect(merged == sum.encoded, "the merge writes the canonical form")
            let back = try #require(DimensionEncoding.merged(merged, b.encoded, sign: -1))
            #expect(back == a.encoded)
            #expect(DimensionEncoding.merged(a.encoded, a.encoded, sign: -1) == [])
        }
    }

    @Test("more than 127 values in a section widen its count")
    func manyValues() throws {
        var reference = Reference()
        for index in 0..<300 { reference.countries["c\(index)"] = Int64(index + 1) }
        let decoded = try #require(DimensionEncoding.decode(reference.encoded))
        #expect(Reference(decoded) == reference)
        let doubled = try #require(DimensionEncoding.merged(reference.encoded, reference.encoded))
        #expect(DimensionEncoding.decode(doubled)?.countries.count == 300)
    }

    @Test("truncated, unordered or random blobs are refused, never a crash; cut where comments start, the plays' three sections")
    func malformed() throws {
        var random = SystemRandomNumberGenerator()
        let reference = DimensionEncodingTests.randomReferenceNonEmpty(&random)
        let valid = reference.encoded
        var plays = reference
        plays.comments = [:]
        for length in 0..<valid.count where length > 0 {
            let decoded = DimensionEncoding.decode(Array(valid.prefix(length)))
            if length == plays.encoded.count {
                #expect(Reference(try #require(decoded)) == plays)
            } else {
                #expect(decoded == nil)
            }
        }
        #expect(DimensionEncoding.decode([2, 5, 2, 3, 2, 0, 0]) == nil, "buckets must ascend")
        #expect(DimensionEncoding.decode([1, 100, 2, 0, 0]) == nil, "bucket 100 does not exist")
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 1...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = DimensionEncoding.decode(bytes)
            _ = DimensionEncoding.merged(bytes, valid)
        }
    }

    static func randomReferenceNonEmpty(_ random: inout some RandomNumberGenerator) -> Reference {
        var reference = randomReference(&random)
        reference.waveform[7] = 3
        reference.countries["SE"] = 2
        reference.comments[42] = -3
        return reference
    }

    /// Bucket 7: 3 plays; country "DE": 1 play; no client — as written before comments had a waveform.
    static let threeSectionBlob: [UInt8] = [1, 7, 6, 1, 2, 0x44, 0x45, 2, 0]

    @Test("a blob of three sections, written before comments had a waveform, reads and merges as one without comments")
    func threeSectionBlobs() throws {
        var old = Reference()
        old.waveform[7] = 3
        old.countries["DE"] = 1
        #expect(old.encoded == Self.threeSectionBlob, "plays alone keep the bytes of three sections")
        let decoded = try #require(DimensionEncoding.decode(Self.threeSectionBlob))
        #expect(decoded.commentsWaveform == [Int64](repeating: 0, count: 100))
        #expect(Reference(decoded) == old)
        #expect(DimensionEncoding.merged(Self.threeSectionBlob, []) == Self.threeSectionBlob)

        var comments = Reference()
        comments.comments = [0: 2, 99: -1]
        let both = try #require(DimensionEncoding.merged(Self.threeSectionBlob, comments.encoded))
        var expected = old
        expected.add(comments)
        #expect(both == expected.encoded)
        #expect(both == Self.threeSectionBlob + [2, 0, 4, 99, 1])
        // The other way round, and taking the comments away again, back to the old bytes.
        #expect(DimensionEncoding.merged(comments.encoded, Self.threeSectionBlob) == both)
        #expect(DimensionEncoding.merged(both, comments.encoded, sign: -1) == Self.threeSectionBlob)
        #expect(DimensionEncoding.merged(both, Self.threeSectionBlob, sign: -1) == comments.encoded)
        // A rollup's subtraction of an old hour from a sum that holds comments.
        #expect(DimensionEncoding.merged(both, both, sign: -1) == [])
    }

    @Test("comments' buckets may be negative; a deletion cancels its comment; comments alone leave the plays' sections empty")
    func negativeCommentBuckets() throws {
        var deletions = Reference()
        deletions.comments = [5: -2]
        #expect(deletions.encoded == [0, 0, 0, 1, 5, 3])
        let decoded = try #require(DimensionEncoding.decode(deletions.encoded))
        #expect(decoded.commentsWaveform[5] == -2 && decoded.waveform.allSatisfy { $0 == 0 } && decoded.countries.isEmpty)
        var twoComments = Reference()
        twoComments.comments = [5: 2]
        #expect(DimensionEncoding.merged(deletions.encoded, twoComments.encoded) == [], "nothing left: the empty blob")
        #expect(DimensionEncoding.merged(twoComments.encoded, deletions.encoded, sign: -1) == [0, 0, 0, 1, 5, 8])
        // An explicit empty fourth section reads as none, and the merge leaves it out.
        #expect(DimensionEncoding.decode([1, 7, 6, 0, 0, 0]) == DimensionEncoding.decode([1, 7, 6, 0, 0]))
        #expect(DimensionEncoding.merged([1, 7, 6, 0, 0, 0], []) == [1, 7, 6, 0, 0])
        #expect(DimensionEncoding.merged([0, 0, 0, 0], []) == [])
        // The comments' section is checked like the plays' waveform.
        #expect(DimensionEncoding.decode([0, 0, 0, 1, 100, 2]) == nil, "bucket 100 does not exist")
        #expect(DimensionEncoding.decode([0, 0, 0, 2, 6, 2, 5, 2]) == nil, "buckets must ascend")
        #expect(DimensionEncoding.decode([0, 0, 0, 2, 5, 2]) == nil, "an entry is missing")
        #expect(DimensionEncoding.decode([0, 0, 0, 1, 5, 2, 0, 0, 0, 0, 0, 0]) == nil, "nothing may follow the last section")
        #expect(DimensionEncoding.merged([0, 0, 0, 1, 100, 2], []) == nil)
    }

    @Test("aggregated plays and comments per (track, hour) equal a dictionary count of the same events")
    func aggregationMatchesDictionaries() throws {
        var random = SystemRandomNumberGenerator()
        var counts = DimensionCounts(minimumCapacity: 16)
        var reference: [Int64: [Int64: Reference]] = [:]
        for _ in 0..<50_000 {
            let track = Int64.random(in: 1...40, using: &random)
            let hour = Hour(index: Int64.random(in: 490_000...490_005, using: &random))
            if Int.random(in: 0..<8, using: &random) == 0 {
                // A comment or a deletion, on few buckets so that some cancel out.
                let bucket = Int8.random(in: 0...3, using: &random) * 33
                let weight: Int64 = Bool.random(using: &random) ? 1 : -1
                counts.addComment(id: track, hour: hour, waveformBucket: bucket, weight: weight)
                var comment = Reference()
                comment.comments[Int(bucket)] = weight
                reference[track, default: [:]][hour.index, default: Reference()].add(comment)
                continue
            }
            let bucket: Int8? = Bool.random(using: &random) ? Int8.random(in: 0...99, using: &random) : nil
            let client = Int.random(in: 0..<5, using: &random) == 0 ? nil : Self.names.randomElement(using: &random)
            let country = Int.random(in: 0..<5, using: &random) == 0 ? nil : Self.names.randomElement(using: &random)
            counts.add(id: track, hour: hour, PlayDimensions(waveformBucket: bucket, client: client.flatMap(DimensionValue.init),
                                                                  country: country.flatMap(DimensionValue.init)))
            var entry = reference[track, default: [:]][hour.index, default: Reference()]
            if let bucket { entry.waveform[Int(bucket), default: 0] += 1 }
            if let client { entry.clients[client, default: 0] += 1 }
            if let country { entry.countries[country, default: 0] += 1 }
            reference[track, default: [:]][hour.index] = entry
        }
        let rows = counts.rows()
        #expect(rows.map { [$0.id, $0.hour.index] } == rows.map { [$0.id, $0.hour.index] }.sorted { $0.lexicographicallyPrecedes($1) })
        var seen = 0
        for row in rows {
            let expected = try #require(reference[row.id]?[row.hour.index])
            #expect(Reference(try #require(DimensionEncoding.decode(row.encoded))) == expected)
            // Comments that cancelled out everywhere leave their key the empty blob.
            #expect(row.encoded.isEmpty == (expected == Reference()))
            if !row.encoded.isEmpty { seen += 1 }
        }
        #expect(seen == reference.values.reduce(0) { $0 + $1.filter { $0.value != Reference() }.count })
        counts.removeAll()
        #expect(counts.rows().isEmpty)
    }

    @Test("a creator's counts by track per signal aggregate, encode after an empty comments' section, merge and subtract exactly")
    func countsByTrack() throws {
        var random = SystemRandomNumberGenerator()
        var counts = DimensionCounts(minimumCapacity: 16)
        var reference: [Int64: [Int: [Int64: Int64]]] = [:]  // creator → signal ordinal → track → net count
        let hour = Hour(index: 490_000)
        for _ in 0..<20_000 {
            let creator = Int64.random(in: 1...5, using: &random)
            let track = Int64.random(in: 1...300, using: &random) * (creator == 5 ? 1 << 40 : 1)  // ids above 32 bits too
            let signal = Signal.allCases.randomElement(using: &random)!
            let weight: Int64 = signal == .plays || Int.random(in: 0..<3, using: &random) > 0 ? 1 : -1
            counts.addTrack(track, to: creator, hour: hour, signal: signal, weight: weight)
            reference[creator, default: [:]][signal.ordinal, default: [:]][track, default: 0] += weight
            if Int.random(in: 0..<50, using: &random) == 0 {
                counts.add(id: creator, hour: hour, PlayDimensions(country: DimensionValue("DE")))
            }
        }
        var blobs: [[UInt8]] = []
        for row in counts.rows() {
            let decoded = try #require(DimensionEncoding.decode(row.encoded))
            for signal in Signal.allCases {
                let expected = (reference[row.id]?[signal.ordinal] ?? [:]).filter { $0.value != 0 }.sorted { $0.key < $1.key }
                #expect(decoded.byTrack[signal.ordinal].map(\.track) == expected.map(\.key), "creator \(row.id), \(signal)")
                #expect(decoded.byTrack[signal.ordinal].map(\.count) == expected.map(\.value))
            }
            blobs.append(row.encoded)
        }
        #expect(blobs.count == 5)
        // Merged and taken apart again, entry by entry; a blob less itself is the empty blob.
        let sum = blobs.dropFirst().reduce(blobs[0]) { DimensionEncoding.merged($0, $1) ?? [] }
        #expect(DimensionEncoding.merged(sum, blobs[1], sign: -1).flatMap { DimensionEncoding.decode($0) }
            == DimensionEncoding.merged(blobs[0], blobs[2]).flatMap { DimensionEncoding.merged($0, blobs[3]) }
                .flatMap { DimensionEncoding.merged($0, blobs[4]) }.flatMap { DimensionEncoding.decode($0) })
        #expect(DimensionEncoding.merged(blobs[2], blobs[2], sign: -1) == [])
        // Encoded by hand: plays' sections empty, the comments' written as an empty count because
        // a section after it holds an entry, then likes by track 7 = −1 and nothing after it.
        var out: [UInt8] = []
        DimensionEncoding.encode(waveform: [], countries: [], clients: [], byTrack: [.likes: [(7, -1)]], into: &out)
        #expect(out == [0, 0, 0, 0, 0, 0, 1, 8, 0, 0, 0, 0, 0, 0, 0, 7, 1])
        // A three-section blob plus it, and less it again, is the three-section blob.
        let plays: [UInt8] = [1, 7, 6, 0, 0]
        let both = try #require(DimensionEncoding.merged(plays, out))
        #expect(DimensionEncoding.merged(both, out, sign: -1) == plays)
        #expect(try #require(DimensionEncoding.decode(both)).byTrack[Signal.likes.ordinal].map(\.count) == [-1])
        // A by-track key is a track id's 8 bytes: merge refuses any other length as decode does
        // (the fuzzer found merge accepting a 3-byte one).
        let shortKey: [UInt8] = [0, 0, 0, 0, 1, 3, 1, 2, 3, 2]
        #expect(DimensionEncoding.decode(shortKey) == nil)
        #expect(DimensionEncoding.merged(shortKey, []) == nil)
    }

    @Test("breakdowns order by plays descending, then by UTF-8 bytes, with null last")
    func breakdownOrder() {
        let values: [(value: DimensionValue, plays: Int64)] = [
            (DimensionValue("b")!, 5), (DimensionValue("é")!, 9), (DimensionValue("a")!, 5), (DimensionValue("Z")!, 5),
            (DimensionValue("zero")!, 0), (DimensionValue("")!, 1),
        ]
        let ordered = Breakdown.ordered(values, totalPlays: 40)
        #expect(ordered.map { $0.value?.string } == ["é", "Z", "a", "b", "", nil])
        #expect(ordered.map(\.plays) == [9, 5, 5, 5, 1, 15])
        #expect(Breakdown.ordered(values, totalPlays: 25).last?.value != nil, "no null entry without plays lacking the field")
        #expect(Breakdown.ordered([], totalPlays: 0).isEmpty)
    }
}
