import CounterpointCore
import FuzzSupport

/// libFuzzer entry for the listener sketch's decoder and union (docs/fuzzing.md). The input is
/// read whole as one stored sketch and, after two bytes giving the cut, as two sketches to unite. Besides
/// "no crash" it checks that a decoded sketch re-encodes to the same bytes when it is written in
/// the representation it was read from (and to bytes that decode to it in any case), that its
/// estimate is a sane number, that union is commutative, idempotent and re-decodes, and that
/// uniting the encoded sketches (the store's way) gives the same bytes.
@main
enum FuzzDriver {
    static func main() { runLibFuzzer(fuzzSketch) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSketch(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    checkDecoded(input)
    guard input.count >= 2 else { return 0 }
    let rest = input.dropFirst(2)
    let split = rest.startIndex + (Int(input[0]) << 8 | Int(input[1])) % (rest.count + 1)
    // The union the store makes from stored bytes (in place where it can) is the decoded
    // union's bytes, and fails exactly when that does.
    let inPlace: [UInt8]? = rest[..<split].withUnsafeBytes { a in
        rest[split...].withUnsafeBytes { b in
            var out: [UInt8] = []
            return (try? HyperLogLog.unite(encoded: a, b, into: &out)) != nil ? out : nil
        }
    }
    // Each part decoded once, and united once, for every check below (the debug build this
    // runs in spends most of an input in these).
    let a = try? HyperLogLog(decoding: rest[..<split]), b = try? HyperLogLog(decoding: rest[split...])
    let decoded = a.flatMap { a in b.flatMap { try? a.union($0) } }
    check(inPlace == decoded?.encoded, "the union of encoded sketches differs from the union of the decoded ones")
    guard let a, let b else { return 0 }
    guard let union = decoded else {
        check(a.parameters != b.parameters, "a union of sketches with equal parameters failed")
        return 0
    }
    check((try? b.union(a)) == union, "union is not commutative")
    check((try? union.union(a)) == union && (try? union.union(b)) == union, "a union changes when united with a part")
    check((try? HyperLogLog(decoding: union.encoded)) == union, "a union does not decode to itself")
    return 0
}

func checkDecoded(_ bytes: [UInt8]) {
    guard let sketch = try? HyperLogLog(decoding: bytes) else { return }
    let encoded = sketch.encoded
    check((try? HyperLogLog(decoding: encoded)) == sketch, "a re-encoded sketch decodes to another sketch")
    if sketch.representation.rawValue == bytes[0] & 0x0F {
        check(encoded == bytes, "a sketch re-encodes to other bytes in the representation it was read from")
    }
    let estimate = sketch.cardinality
    check(estimate.isFinite && estimate >= 0, "an estimate that is not a finite non-negative number: \(estimate)")
    if sketch.isExact { check(estimate == estimate.rounded(), "an exact sketch with a fractional count: \(estimate)") }
}
