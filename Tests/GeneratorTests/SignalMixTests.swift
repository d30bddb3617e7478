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
}
