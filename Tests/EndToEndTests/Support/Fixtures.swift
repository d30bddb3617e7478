import Foundation
import Testing

/// The day every generated log covers: 2026-11-20, hours 00…23 UTC.
enum TestDay {
    static let start = "2026-11-20T00:00:00Z"
    static let firstHour = Hours.index(2026, 11, 20)
    static let hours = firstHour..<(firstHour + 24)
}

/// Steps the tests share: generate logs, run a batch, ask the reader the same questions twice.
enum Steps {
    /// `counterpoint generate` into `logs` over `TestDay`; returns its `--json` summary.
    @discardableResult
    static func generate(into logs: URL, scratch: URL, events: Int, tracks: Int, seed: Int,
                         duplicates: Double = 0, malformed: Double = 0) async throws -> [String: Any] {
        try await runCounterpointJSON([
            "generate", "--logs", logs.path, "--events", "\(events)", "--tracks", "\(tracks)",
            "--hours", "24", "--start", TestDay.start, "--seed", "\(seed)",
            "--duplicates", "\(duplicates)", "--malformed", "\(malformed)", "--json",
        ], scratch: scratch)
    }

    /// `counterpoint batch --json` that must succeed; returns its summary.
    @discardableResult
    static func batch(logs: URL, data: URL, scratch: URL, extraArguments: [String] = []) async throws -> [String: Any] {
        try await runCounterpointJSON(
            ["batch", "--logs", logs.path, "--data-dir", data.path, "--json"] + extraArguments, scratch: scratch)
    }

    /// The answers a dashboard would fetch, as raw bodies: every track's total through
    /// multi-get, the top 50, and hourly and daily timelines of a few tracks. Comparing two
    /// snapshots byte for byte shows whether anything at all changed.
    static func snapshot(_ server: Server, tracks: [Int64], timelineTracks: [Int64]) throws -> [String: String] {
        var answers: [String: String] = [:]
        var targets = ["/v1/top?limit=50", "/v1/top?limit=5&from=2026-11-20T06:00:00Z&to=2026-11-20T12:00:00Z"]
        for chunk in stride(from: 0, to: tracks.count, by: 500) {
            let ids = tracks[chunk..<min(chunk + 500, tracks.count)].map(String.init).joined(separator: ",")
            targets.append("/v1/plays?track_id=\(ids)")
        }
        for track in timelineTracks {
            targets.append("/v1/tracks/\(track)/timeline?from=2026-11-19T22:00:00Z&to=2026-11-21T02:00:00Z")
            targets.append("/v1/tracks/\(track)/timeline?step=day&from=2026-11-19T00:00:00Z&to=2026-11-22T00:00:00Z")
        }
        for target in targets {
            let response = try server.request(target)
            guard response.status == 200 else {
                throw CommandError(description: "GET \(target.prefix(120)) → \(response.status) \(response.text.prefix(300))")
            }
            answers[target] = response.text
        }
        return answers
    }

    /// Every track's merged total, through `/v1/plays` in chunks of 500 ids.
    static func totals(_ server: Server, tracks: [Int64], query: String = "") throws -> [Int64: Int] {
        var totals: [Int64: Int] = [:]
        for chunk in stride(from: 0, to: tracks.count, by: 500) {
            let ids = tracks[chunk..<min(chunk + 500, tracks.count)].map(String.init).joined(separator: ",")
            let answer = try server.json("/v1/plays?track_id=\(ids)\(query)")
            for entry in answer["tracks"] as? [[String: Any]] ?? [] {
                totals[int64(entry["track_id"])] = int(entry["plays"])
            }
        }
        return totals
    }

    /// Timeline plays per hour index, from a `step=hour` answer.
    static func hourlyTimeline(_ server: Server, track: Int64, hours: Range<Int64>) throws -> [Int64: Int] {
        let answer = try server.json("/v1/tracks/\(track)/timeline?from=\(Hours.text(hours.lowerBound))&to=\(Hours.text(hours.upperBound))")
        var points: [Int64: Int] = [:]
        for point in answer["points"] as? [[String: Any]] ?? [] {
            guard let start = point["start"] as? String, let milliseconds = LogTruth.parseTimestamp(start) else { continue }
            points[milliseconds / LogTruth.millisecondsPerHour] = int(point["plays"])
        }
        return points
    }

    /// The number of batch runs `/v1/status` reports.
    static func batchRunCount(_ server: Server) throws -> Int {
        let status = try server.json("/v1/status")
        return ((status["batch"] as? [String: Any])?["runs"] as? [Any])?.count ?? -1
    }
}

func int(_ value: Any?) -> Int {
    (value as? NSNumber)?.intValue ?? Int.min
}

func int64(_ value: Any?) -> Int64 {
    (value as? NSNumber)?.int64Value ?? Int64.min
}
