import CounterpointCore
import FuzzSupport

/// libFuzzer entry for the stored dimension blob (docs/fuzzing.md). The input is read three ways:
/// whole, as one blob to decode; and, after a control byte, as two blobs `a` and `b` to merge.
/// Besides "no crash" it checks that a decoded blob re-encodes to a blob that decodes to the same
/// counts, that merging with nothing gives that same encoding, and that `merge` accepts exactly
/// the pairs `decode` accepts and sums them as plain dictionaries do.
@main
enum FuzzDriver {
    static func main() { runLibFuzzer(fuzzDimensionBlob) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDimensionBlob(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    checkRoundTrip(input)
    guard let control = input.first else { return 0 }
    let rest = input.dropFirst()
    let split = rest.startIndex + Int(control >> 1) % (rest.count + 1)
    checkMerge(Array(rest[..<split]), Array(rest[split...]), sign: control & 1 == 0 ? 1 : -1)
    return 0
}

func checkRoundTrip(_ blob: [UInt8]) {
    guard let totals = DimensionEncoding.decode(blob) else { return }
    let encoded = encode(Counts(totals))
    guard let again = DimensionEncoding.decode(encoded) else { fatalError("a re-encoded blob does not decode") }
    check(Counts(again) == Counts(totals), "a re-encoded blob decodes to other counts")
    check(encode(Counts(again)) == encoded, "encoding is not stable")
    check(DimensionEncoding.merged(blob, []) == encoded, "merging with nothing differs from re-encoding")
}

func checkMerge(_ a: [UInt8], _ b: [UInt8], sign: Int64) {
    let merged = DimensionEncoding.merged(a, b, sign: sign)
    guard let left = DimensionEncoding.decode(a), let right = DimensionEncoding.decode(b) else {
        check(merged == nil, "merge accepted a blob that decode rejects")
        return
    }
    guard let merged else { fatalError("merge rejected blobs that decode accepts") }
    var expected = Counts(left)
    expected.add(Counts(right), sign: sign)
    check(merged == encode(expected), "merge differs from the sum of the decoded counts")
}

/// The reference: nonzero counts by section and key, in plain dictionaries.
struct Counts: Equatable {
    var waveform: [Int: Int64] = [:]
    var countries: [[UInt8]: Int64] = [:]
    var clients: [[UInt8]: Int64] = [:]
    var comments: [Int: Int64] = [:]
    /// A creator's counts by track, per signal ordinal.
    var byTrack: [Int: [Int64: Int64]] = [:]

    init(_ totals: DimensionTotals) {
        for (bucket, count) in totals.waveform.enumerated() where count != 0 { waveform[bucket] = count }
        for (value, count) in totals.countries where count != 0 { countries[value.bytes] = count }
        for (value, count) in totals.clients where count != 0 { clients[value.bytes] = count }
        for (bucket, count) in totals.commentsWaveform.enumerated() where count != 0 { comments[bucket] = count }
        for (signal, entries) in totals.byTrack.enumerated() {
            for (track, count) in entries where count != 0 { byTrack[signal, default: [:]][track] = count }
        }
    }

    mutating func add(_ other: Counts, sign: Int64) {
        for (key, count) in other.waveform { waveform[key, default: 0] &+= sign &* count }
        for (key, count) in other.countries { countries[key, default: 0] &+= sign &* count }
        for (key, count) in other.clients { clients[key, default: 0] &+= sign &* count }
        for (key, count) in other.comments { comments[key, default: 0] &+= sign &* count }
        for (signal, entries) in other.byTrack {
            for (track, count) in entries { byTrack[signal, default: [:]][track, default: 0] &+= sign &* count }
            byTrack[signal] = byTrack[signal]!.filter { $0.value != 0 }
            if byTrack[signal]!.isEmpty { byTrack[signal] = nil }
        }
        waveform = waveform.filter { $0.value != 0 }
        countries = countries.filter { $0.value != 0 }
        clients = clients.filter { $0.value != 0 }
        comments = comments.filter { $0.value != 0 }
    }
}

func encode(_ counts: Counts) -> [UInt8] {
    func sorted(_ map: [[UInt8]: Int64]) -> [(value: DimensionValue, count: Int64)] {
        map.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map { entry in (value: entry.key.withUnsafeBytes { DimensionValue(copying: $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: $0.count) }, count: entry.value) }
    }
    var out: [UInt8] = []
    DimensionEncoding.encode(waveform: counts.waveform.sorted { $0.key < $1.key }.map { (bucket: $0.key, count: $0.value) },
                             countries: sorted(counts.countries), clients: sorted(counts.clients),
                             commentsWaveform: counts.comments.sorted { $0.key < $1.key }.map { (bucket: $0.key, count: $0.value) },
                             byTrack: Dictionary(uniqueKeysWithValues: counts.byTrack.map { signal, entries in
                                 (Signal.allCases[signal], entries.sorted { UInt64(bitPattern: $0.key) < UInt64(bitPattern: $1.key) }.map { (track: $0.key, count: $0.value) })
                             }), into: &out)
    return out
}
