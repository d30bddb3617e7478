// Builds a counter store of a given shape for the reader benchmark (loadtest/bench-reader):
// `tracks` tracks × `hours` hours, the first hours covered by the batch layer and the last
// REALTIME_HOURS (default half) counted by the realtime layer — through the same store APIs the
// product uses.
//
//   counterpoint-store-fixture DATA_DIR TRACKS HOURS [FIRST_HOUR_INDEX [REALTIME_HOURS]]
import CounterpointCore
import CounterStore
import Foundation

/// A deterministic, uneven count per (track, hour), the formula the C baseline's table uses.
func plays(_ track: Int64, _ hour: Int64) -> Int64 { (track * 7 + hour * 13) % 50 + 1 }

/// The covered half, as one batch run. The store closes when this returns, which checkpoints
/// its write-ahead log into the database file, as a finished `batch` leaves it.
func buildBatch(_ location: StoreLocation, tracks: Int64, range: HourRange) throws {
    let batch = try SQLiteBatchStore(location: location)
    try batch.replace(ranges: [range], startedAt: 0) { writer in
        for track in 1...tracks {
            for offset in 0..<range.count {
                let hour = range.lower.advanced(by: offset)
                try writer.write(trackID: track, hour: hour, plays: plays(track, hour.index))
            }
        }
        return BatchRun(range: range, startedAt: 0, finishedAt: 0, eventsRead: 0, valid: 0, duplicates: 0,
                        rejected: 0, rejectedByReason: [:], tracks: Int(tracks), rows: Int(tracks * range.count))
    }
}

/// The uncovered half, as realtime flushes of 20,000 tracks each on partition 0.
func buildRealtime(_ location: StoreLocation, tracks: Int64, range: HourRange) throws {
    let realtime = try SQLiteRealtimeStore(location: location)
    var nextOffset: Int64 = 0
    var first: Int64 = 1
    while first <= tracks {
        let last = min(tracks, first + 19_999)
        var increments: [CountRow] = []
        increments.reserveCapacity(Int((last - first + 1) * range.count))
        for track in first...last {
            for offset in 0..<range.count {
                let hour = range.lower.advanced(by: offset)
                increments.append(CountRow(id: track, hour: hour, plays: plays(track, hour.index)))
            }
        }
        let start = nextOffset == 0 ? nil : nextOffset
        nextOffset += Int64(increments.count)
        _ = try realtime.apply(increments: increments,
                               progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: start,
                                                            nextOffset: nextOffset, highWatermark: nextOffset)],
                               flushedAt: Int64(Date().timeIntervalSince1970 * 1000))
        first = last + 1
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let tracks = Int64(arguments[2]), let hours = Int64(arguments[3]), tracks > 0, hours > 1 else {
    FileHandle.standardError.write(Data("usage: counterpoint-store-fixture DATA_DIR TRACKS HOURS [FIRST_HOUR_INDEX [REALTIME_HOURS]]\n".utf8))
    exit(2)
}
let firstHour = Hour(index: arguments.count > 4 ? Int64(arguments[4]) ?? 491_000 : 491_000)
let location = StoreLocation(directory: arguments[1])
let realtimeHours = arguments.count > 5 ? min(hours - 1, max(1, Int64(arguments[5]) ?? hours / 2)) : hours / 2
let covered = HourRange(firstHour, firstHour.advanced(by: hours - realtimeHours))
let started = Date()
try buildBatch(location, tracks: tracks, range: covered)
try buildRealtime(location, tracks: tracks, range: HourRange(covered.upper, firstHour.advanced(by: hours)))
print("store-fixture: \(tracks) tracks × \(hours) hours (\(covered.count) covered) in \(location.directory), " +
      String(format: "%.1f s", Date().timeIntervalSince(started)))
