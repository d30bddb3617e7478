/// A record of one play kept for aggregation, keyed by (track, hour).
protocol TrackHourRecord {
    var trackID: Int64 { get }
    var hour: Int64 { get }
}

/// Sorts per-play records by (track, hour) once per batch unit or flush (`DimensionCounts`,
/// `ListenerCounts`): appending a record per play and sorting them afterwards writes memory
/// sequentially, where a hash table would take a cache miss per play.
enum TrackHourSort {
    /// A least-significant-digit radix sort on the key `trackID << hourBits | (hour − first hour)`,
    /// linear in the records (a comparison sort of a unit's records cost more than counting them
    /// did), or a comparison sort when the key does not fit in 64 bits. Stable; `buffer` is the
    /// second buffer, kept by the caller between calls.
    static func sort<Record: TrackHourRecord>(_ records: inout [Record], buffer sortBuffer: inout [Record]) {
        guard records.count > 1 else { return }
        var firstHour = Int64.max, lastHour = Int64.min, largestTrack: Int64 = 0
        for record in records {
            firstHour = min(firstHour, record.hour)
            lastHour = max(lastHour, record.hour)
            largestTrack = max(largestTrack, record.trackID)
        }
        let hourBits = 64 - UInt64(lastHour - firstHour).leadingZeroBitCount
        let keyBits = hourBits + 64 - UInt64(largestTrack).leadingZeroBitCount
        guard keyBits <= 64 else {
            records.sort { $0.trackID != $1.trackID ? $0.trackID < $1.trackID : $0.hour < $1.hour }
            return
        }
        let digitBits = 11, digitMask = (1 << digitBits) - 1
        var offsets = [Int](repeating: 0, count: 1 << digitBits)
        sortBuffer.removeAll(keepingCapacity: true)
        sortBuffer.append(contentsOf: records)
        var shift = 0
        while shift < keyBits {
            records.withUnsafeBufferPointer { source in
                sortBuffer.withUnsafeMutableBufferPointer { target in
                    @inline(__always) func digit(_ record: Record) -> Int {
                        Int(truncatingIfNeeded: (UInt64(record.trackID) << UInt64(hourBits) | UInt64(record.hour - firstHour)) >> UInt64(shift)) & digitMask
                    }
                    for index in offsets.indices { offsets[index] = 0 }
                    for record in source { offsets[digit(record)] += 1 }
                    var total = 0
                    for index in offsets.indices {
                        let count = offsets[index]
                        offsets[index] = total
                        total += count
                    }
                    for record in source {
                        let place = digit(record)
                        target[offsets[place]] = record
                        offsets[place] += 1
                    }
                }
            }
            swap(&records, &sortBuffer)
            shift += digitBits
        }
    }
}
