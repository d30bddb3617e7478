@testable import CounterStore
import CoreTestSupport
import CounterpointCore
import Patience
import Testing

/// A flush's rows as the realtime consumer builds them — each table sorted in (hour, track)
/// order and merged in one sweep — against the rows of the general path (per-row entries,
/// summed and sorted) and against blobs encoded from a model of the plays kept by the test.
@Suite("Realtime flush rows built in one sweep", .onTestThreads)
struct RealtimeRowsTests {
    struct Play {
        var track: Int64
        var hour: Int64
        var bucket: Int8?
        var client: String?
        var country: String?
        var listener: Int64?
    }

    static let names = ["DE", "US", "ios", "web", "", "é", "\u{1}x", "android", "FR"]

    /// Plays over a few hours and tracks, some keys with hundreds of listeners (past the explicit
    /// sketch's 320 hashes), some plays without any dimension or listener.
    static func randomPlays(_ random: inout some RandomNumberGenerator) -> [Play] {
        var plays: [Play] = []
        for _ in 0..<Int.random(in: 0...3_000, using: &random) {
            plays.append(Play(track: Int64.random(in: 1...40, using: &random), hour: 490_000 + Int64.random(in: 0..<5, using: &random),
                              bucket: Bool.random(using: &random) ? Int8.random(in: 0...99, using: &random) : nil,
                              client: Int.random(in: 0..<3, using: &random) == 0 ? nil : names.randomElement(using: &random),
                              country: Int.random(in: 0..<3, using: &random) == 0 ? nil : names.randomElement(using: &random),
                              listener: Int.random(in: 0..<4, using: &random) == 0 ? nil : Int64.random(in: 1...200, using: &random)))
        }
        // A hot key: many distinct listeners, repeated.
        for index in 0..<Int.random(in: 0...900, using: &random) {
            plays.append(Play(track: 7, hour: 490_002, listener: Int64(index % 700)))
        }
        return plays.shuffled(using: &random)
    }

    struct Tables {
        var counts = HourCounts()
        var dimensions = DimensionCounts()
        var listeners = ListenerCounts()

        init(_ plays: [Play]) {
            for play in plays {
                let hour = Hour(index: play.hour)
                counts.add(id: play.track, hour: hour)
                dimensions.add(id: play.track, hour: hour,
                               PlayDimensions(waveformBucket: play.bucket, client: play.client.flatMap(DimensionValue.init),
                                              country: play.country.flatMap(DimensionValue.init)))
                listeners.add(id: play.track, hour: hour, listenerID: play.listener)
            }
        }
    }

    struct Row: Equatable {
        var hour: Int64
        var track: Int64
        var plays: Int64
        var dimensions: [UInt8]
        var listenerPlays: Int64
        var listeners: [UInt8]
    }

    static func contents(_ rows: CounterRows) -> [Row] {
        rows.dimensions.withBlobs { dimension in
            rows.listeners.withBlobs { sketch in
                rows.indices.map {
                    Row(hour: rows.firstKeys[$0], track: rows.secondKeys[$0], plays: rows.counts[$0].plays, dimensions: Array(dimension($0)),
                        listenerPlays: rows.listenerPlays[$0], listeners: Array(sketch($0)))
                }
            }
        }
    }

    /// The row of each key, from the plays alone: blobs encoded entry by entry
    /// (`DimensionEncoding.encode`) and sketches built hash by hash (`HyperLogLog.add`).
    static func model(_ plays: [Play]) -> [Row] {
        let keys = Dictionary(grouping: plays) { [$0.hour, $0.track] }
        return keys.keys.sorted { ($0[0], $0[1]) < ($1[0], $1[1]) }.map { key in
            let group = keys[key]!
            var waveform: [Int: Int64] = [:]
            var countries: [String: Int64] = [:]
            var clients: [String: Int64] = [:]
            for play in group {
                if let bucket = play.bucket { waveform[Int(bucket), default: 0] += 1 }
                if let country = play.country { countries[country, default: 0] += 1 }
                if let client = play.client { clients[client, default: 0] += 1 }
            }
            func entries(_ counts: [String: Int64]) -> [(value: DimensionValue, count: Int64)] {
                counts.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
                    .map { (DimensionValue($0.key)!, $0.value) }
            }
            var blob: [UInt8] = []
            DimensionEncoding.encode(waveform: waveform.sorted { $0.key < $1.key }.map { (bucket: $0.key, count: $0.value) },
                                     countries: entries(countries), clients: entries(clients), into: &blob)
            let listenerIDs = group.compactMap(\.listener)
            return Row(hour: key[0], track: key[1], plays: Int64(group.count), dimensions: blob,
                       listenerPlays: Int64(listenerIDs.count),
                       listeners: listenerIDs.isEmpty ? [] : HyperLogLog(listenerIDs: listenerIDs).encoded)
        }
    }

    @Test("rows merged from the sorted tables equal the general path's and the model's, byte for byte", arguments: 0..<40)
    func sweepEqualsGeneralPath(_ round: Int) throws {
        var random = SystemRandomNumberGenerator()
        let plays = Self.randomPlays(&random)

        var general = Tables(plays)
        let expected = try Self.contents(CounterRows.realtime(general.counts.sortedElements(), dimensions: general.dimensions.rows(),
                                                              listeners: general.listeners.rows()))

        var tables = Tables(plays)
        var dimensions = EncodedRows()
        var listeners = EncodedRows()
        tables.dimensions.encodeRows(.hourThenID, into: &dimensions)
        tables.listeners.encodeRows(.hourThenID, into: &listeners)
        let swept = try Self.contents(CounterRows.realtime(sorted: tables.counts.sortedElements(.hourThenID),
                                                           dimensions: dimensions, listeners: listeners))

        #expect(swept == expected)
        #expect(swept == Self.model(plays))
    }

    @Test("a key repeated within a source, or present in one source only, gets one summed row")
    func repeatedAndLoneKeys() throws {
        var dimensions = DimensionCounts()
        dimensions.add(id: 3, hour: Hour(index: 10), PlayDimensions(waveformBucket: 5, client: nil, country: nil))
        dimensions.add(id: 9, hour: Hour(index: 11), PlayDimensions(waveformBucket: nil, client: DimensionValue("ios"), country: nil))
        var encoded = EncodedRows()
        dimensions.encodeRows(.hourThenID, into: &encoded)
        var listeners = ListenerCounts()
        listeners.add(id: 4, hour: Hour(index: 10), listenerID: 77)
        var sketches = EncodedRows()
        listeners.encodeRows(.hourThenID, into: &sketches)
        let increments = [CountRow(id: 2, hour: Hour(index: 10), plays: 1), CountRow(id: 2, hour: Hour(index: 10), plays: 4),
                          CountRow(id: 9, hour: Hour(index: 11), plays: 0)]
        let rows = try Self.contents(CounterRows.realtime(sorted: CountRowList(increments), dimensions: encoded, listeners: sketches))

        #expect(rows.map { [$0.hour, $0.track, $0.plays, $0.listenerPlays] } == [[10, 2, 5, 0], [10, 3, 0, 0], [10, 4, 0, 1], [11, 9, 0, 0]])
        #expect(DimensionEncoding.decode(rows[1].dimensions)?.waveform[5] == 1)
        #expect(rows[2].listeners == HyperLogLog(listenerIDs: [77]).encoded)
        #expect(DimensionEncoding.decode(rows[3].dimensions)?.clients.map(\.plays) == [1])
    }
}
