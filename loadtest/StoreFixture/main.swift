// Builds a counter store of a given shape for the reader benchmark (loadtest/bench-reader):
// `tracks` tracks × `hours` hours, the first half of the hours covered by the batch layer and
// the rest counted by the realtime layer — through the same store APIs the product uses.
//
//   counterpoint-store-fixture DATA_DIR TRACKS HOURS [FIRST_HOUR_INDEX]
import CounterpointCore
import CounterStore
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 4, let tracks = Int64(arguments[2]), let hours = Int64(arguments[3]), tracks > 0, hours > 1 else {
    FileHandle.standardError.write(Data("usage: counterpoint-store-fixture DATA_DIR TRACKS HOURS [FIRST_HOUR_INDEX]\n".utf8))
    exit(2)
}
let firstHour = Hour(index: arguments.count > 4 ? Int64(arguments[4]) ?? 491_000 : 491_000)
let location = StoreLocation(directory: arguments[1])
let coveredHours = hours / 2
let started = Date()

/// A deterministic, uneven count per (track, hour), the same formula the C baseline's table uses.
func plays(_ track: Int64, _ hour: Int64) -> Int64 { (track * 7 + hour * 13) % 50 + 1 }

let batch = try BatchStore(location: location)
let batchRange = HourRange(firstHour, firstHour.advanced(by: coveredHours))
try batch.replace(ranges: [batchRange], startedAt: 0) { writer in
    for track in 1...tracks {
        for offset in 0..<coveredHours {
            let hour = firstHour.advanced(by: offset)
            try writer.write(trackID: track, hour: hour, plays: plays(track, hour.index))
        }
    }
    return BatchRun(range: batchRange, startedAt: 0, finishedAt: 0, eventsRead: 0, valid: 0, duplicates: 0,
                    rejected: 0, rejectedByReason: [:], tracks: Int(tracks), rows: Int(tracks * coveredHours))
}

let realtime = try RealtimeStore(location: location)
var nextOffset: Int64 = 0
let tracksPerFlush: Int64 = 20_000
var track: Int64 = 1
while track <= tracks {
    let last = min(tracks, track + tracksPerFlush - 1)
    var increments: [CountIncrement] = []
    increments.reserveCapacity(Int((last - track + 1) * (hours - coveredHours)))
    for id in track...last {
        for offset in coveredHours..<hours {
            let hour = firstHour.advanced(by: offset)
            increments.append(CountIncrement(trackID: id, hour: hour, plays: plays(id, hour.index)))
        }
    }
    let start = nextOffset == 0 ? nil : nextOffset
    nextOffset += Int64(increments.count)
    _ = try realtime.apply(increments: increments,
                           progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: start,
                                                        nextOffset: nextOffset, highWatermark: nextOffset)],
                           flushedAt: Int64(Date().timeIntervalSince1970 * 1000))
    track = last + 1
}
print("store-fixture: \(tracks) tracks × \(hours) hours (\(coveredHours) covered) in \(location.directory), " +
      String(format: "%.1f s", Date().timeIntervalSince(started)))
