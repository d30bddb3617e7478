import CounterStore
import CounterpointCore
import Foundation

/// A data directory under the system's temporary directory, removed when the test ends.
func withStoreLocation<T>(_ body: (StoreLocation) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("counterstore-tests-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(StoreLocation(directory: path + "/data"))
}

/// Hours of a fixed day, 2026-11-20, so tests read as "hour 10 of the day".
let day = Hour(index: 496_920) // 2026-11-20T00:00:00Z
func hour(_ offset: Int64) -> Hour { day.advanced(by: offset) }
func hours(_ lower: Int64, _ upper: Int64) -> HourRange { HourRange(hour(lower), hour(upper)) }

func batchRun(_ range: HourRange, rows: Int = 0) -> BatchRun {
    BatchRun(range: range, startedAt: 1_000, finishedAt: 2_000, eventsRead: 10, valid: 8, duplicates: 1, rejected: 1,
             rejectedByReason: ["malformed_json": 1], tracks: 1, rows: rows)
}

/// Writes `rows` (track, hour offset, plays) as one batch run over `range`.
@discardableResult
func replace(_ store: BatchStore, _ range: HourRange, _ rows: [(Int64, Int64, Int64)]) throws -> BatchRun {
    try store.replace(range: range, run: batchRun(range, rows: rows.count)) { writer in
        for (track, offset, plays) in rows {
            try writer.write(trackID: track, hour: hour(offset), plays: plays)
        }
    }
}

/// Applies `increments` (track, hour offset, plays) as one flush of partition 0 of "plays".
@discardableResult
func flush(_ store: RealtimeStore, _ increments: [(Int64, Int64, Int64)], from start: Int64?, to next: Int64,
           highWatermark: Int64? = nil, at time: Int64 = 1_700_000_000_000) throws -> FlushOutcome {
    try store.apply(
        increments: increments.map { CountRow(trackID: $0.0, hour: hour($0.1), plays: $0.2) },
        progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: start, nextOffset: next, highWatermark: highWatermark)],
        flushedAt: time)
}
