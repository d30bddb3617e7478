import CounterpointCore
import Foundation
import Generator
import Testing

/// The store's merge of a stored listener sketch with a flush's few hashes, both ways, in the
/// same run; off unless asked for:
/// `COUNTERPOINT_BENCHMARKS=1 swift test -c release --filter SketchUnionBenchmark`.
@Suite("Sketch union benchmark: decoded against encoded", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARKS"] != nil, "set COUNTERPOINT_BENCHMARKS=1 to run"))
struct SketchUnionBenchmark {
    @Test("a stored sparse or full sketch united with 1-8 new hashes: decode both, unite, encode; against unite(encoded:)")
    func unions() throws {
        var random = SeededRandom(seed: 5)
        func sketch(_ count: Int) -> [UInt8] {
            var sketch = HyperLogLog()
            for _ in 0..<count { sketch.add(hash: Int64(bitPattern: random.next())) }
            return sketch.encoded
        }
        let repeats = 50
        for (name, size) in [("sparse, 500 hashes", 500), ("sparse, 1,000", 1_000), ("full, 3,000", 3_000), ("full, 20,000", 20_000)] {
            let pairs = (0..<200).map { _ in (sketch(size), sketch(1 + random.next(below: 8))) }
            var out: [UInt8] = []
            func time(_ unite: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) rethrows -> Double {
                let start = ContinuousClock.now
                for _ in 0..<repeats {
                    for (a, b) in pairs { try a.withUnsafeBytes { a in try b.withUnsafeBytes { b in try unite(a, b) } } }
                }
                let elapsed = (ContinuousClock.now - start).components
                return (Double(elapsed.seconds) * 1e6 + Double(elapsed.attoseconds) / 1e12) / Double(repeats * pairs.count)
            }
            var decoded: [Double] = [], encoded: [Double] = []
            for round in 0..<5 {
                let decodedWay = { (a: UnsafeRawBufferPointer, b: UnsafeRawBufferPointer) throws in
                    out.removeAll(keepingCapacity: true)
                    var union = try HyperLogLog(decoding: a)
                    try union.formUnion(HyperLogLog(decoding: b))
                    union.encode(into: &out)
                }
                let encodedWay = { (a: UnsafeRawBufferPointer, b: UnsafeRawBufferPointer) throws in
                    out.removeAll(keepingCapacity: true)
                    try HyperLogLog.unite(encoded: a, b, into: &out)
                }
                if round % 2 == 0 {
                    decoded.append(try time(decodedWay)); encoded.append(try time(encodedWay))
                } else {
                    encoded.append(try time(encodedWay)); decoded.append(try time(decodedWay))
                }
                print(String(format: "[sketch-union] %@ round %d: decoded %.2f µs, encoded %.2f µs a union",
                             name, round, decoded.last!, encoded.last!))
            }
            let median = { (values: [Double]) in values.sorted()[values.count / 2] }
            print(String(format: "[sketch-union] %@: median decoded %.2f µs, encoded %.2f µs (%.2f of it)",
                         name, median(decoded), median(encoded), median(encoded) / median(decoded)))
        }
    }
}
