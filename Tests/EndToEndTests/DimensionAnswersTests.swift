import Foundation
import Scratch
import Testing

extension EndToEnd {
    @Suite("waveform histograms and breakdowns agree with the test's own reading of the logs")
    struct DimensionAnswers {
        @Test("generate → batch → serve: waveforms and country and client breakdowns of the top and random tracks over random ranges")
        func batchOnly() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                try await Steps.generate(into: logs, scratch: scratch, events: 40_000, tracks: 300,
                                         seed: 1010, duplicates: 0.02, malformed: 0.01)
                let truth = try DimensionTruth(logs: logs)
                try await Steps.batch(logs: logs, data: data, scratch: scratch)
                let all = TestDay.hours
                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    var random = SystemRandomNumberGenerator()
                    let tracks: [Int64] = [1] + (0..<6).map { _ in Int64.random(in: 2...300, using: &random) } + [999_999]
                    for track in tracks {
                        // All time (the default range) first, then random sub-ranges.
                        let everything = truth.tally(track, hours: all, covered: all)
                        let waveform = try server.json("/v1/tracks/\(track)/waveform")
                        #expect((waveform["buckets"] as? [Any])?.map { int($0) } == everything.waveform)
                        #expect(int(waveform["plays"]) == everything.plays)
                        for _ in 0..<3 {
                            let lower = Int64.random(in: all.lowerBound..<all.upperBound, using: &random)
                            let hours = lower..<Int64.random(in: lower...all.upperBound, using: &random)
                            try DimensionTruth.check(server, track: track, hours: hours,
                                                     expected: truth.tally(track, hours: hours, covered: all))
                        }
                    }
                    // The generated data has something to show: drops, plays without position, nulls.
                    let top = truth.tally(1, hours: all, covered: all)
                    #expect(top.waveform[0] > top.plays / 3 && top.withoutPosition > 0)
                    #expect(top.waveform.dropFirst().filter { $0 > top.plays / 200 }.count >= 3)
                    #expect(top.countries[nil] ?? 0 > 0 && top.clients.count == 4)
                }
            }
        }

        @Test("bad values are rejected as docs/event-format.md says; a position past the duration counts in bucket 99; values are kept as sent")
        func badValues() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs/2026-11-20")
                let data = scratch.appendingPathComponent("data")
                try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
                let time = "2026-11-20T05:10:00Z"
                func line(_ id: String, _ extra: String) -> [UInt8] {
                    Array(#"{"event_id":"\#(id)","type":"play","track_id":7,"occurred_at":"\#(time)"\#(extra)}"#.utf8) + [0x0A]
                }
                var file: [UInt8] = []
                file += line("neg", #","position_ms":-1,"duration_ms":1000"#)
                file += line("long", #","country":"\#(String(repeating: "A", count: 33))""#)
                file += line("zero", #","position_ms":1,"duration_ms":0"#)
                var notUTF8 = line("utf8", #","country":"DX""#)
                notUTF8[notUTF8.lastIndex(of: UInt8(ascii: "X"))!] = 0xC3
                file += notUTF8
                file += line("past", #","position_ms":5000,"duration_ms":1000,"country":"\u0044E","client":"ios""#)
                file += line("huge", #","position_ms":9007199254740990,"duration_ms":9007199254740991,"country":"DE""#)
                file += line("half", #","position_ms":500,"duration_ms":1000,"country":"","client":"\u00e9""#)
                file += line("bare", "")
                try Data(file).write(to: logs.appendingPathComponent("05.ndjson"))
                try Data().write(to: logs.appendingPathComponent("05.closed"))

                let summary = try await Steps.batch(logs: scratch.appendingPathComponent("logs"), data: data, scratch: scratch)
                let byReason = summary["rejected_by_reason"] as? [String: Any] ?? [:]
                #expect(int(byReason["invalid_field"]) == 3)
                #expect(int(byReason["invalid_utf8"]) == 1)
                #expect(int(summary["counted"]) == 4)
                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    let waveform = try server.json("/v1/tracks/7/waveform")
                    var buckets = [Int](repeating: 0, count: 100)
                    buckets[99] = 2
                    buckets[50] = 1
                    #expect((waveform["buckets"] as? [Any])?.map { int($0) } == buckets)
                    #expect(int(waveform["plays"]) == 4 && int(waveform["plays_without_position"]) == 1)
                    let countries = (try server.json("/v1/tracks/7/breakdown?by=country")["values"] as? [[String: Any]]) ?? []
                    #expect(countries.map { $0["value"] as? String ?? "<null>" } == ["DE", "", "<null>"])
                    #expect(countries.map { int($0["plays"]) } == [2, 1, 1])
                    let clients = (try server.json("/v1/tracks/7/breakdown?by=client")["values"] as? [[String: Any]]) ?? []
                    #expect(clients.map { $0["value"] as? String ?? "<null>" } == ["ios", "é", "<null>"])
                    #expect(clients.map { int($0["plays"]) } == [1, 1, 2])
                    // Strict parameters, as on every route.
                    for (target, code) in [("/v1/tracks/7/breakdown", "missing_by"), ("/v1/tracks/7/breakdown?by=city", "invalid_by"),
                                           ("/v1/tracks/7/waveform?form=2026-11-20T00:00:00Z", "unknown_parameter"),
                                           ("/v1/tracks/0/waveform", "invalid_track_id"),
                                           ("/v1/tracks/7/waveform?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z", "invalid_range")] {
                        let answer = try server.request(target)
                        #expect(answer.status == 400, "\(target)")
                        #expect(answer.text.contains("\"\(code)\""), "\(target)")
                    }
                    let empty = try server.json("/v1/tracks/8/breakdown?by=client")
                    #expect((empty["values"] as? [Any])?.isEmpty == true)
                }
            }
        }
    }
}
