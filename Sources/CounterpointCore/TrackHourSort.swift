/// A record of one play kept for aggregation, keyed by (track, hour).
protocol TrackHourRecord {
    var trackID: Int64 { get }
    var hour: Int64 { get }
}

/// The order of a store's keys: (track, hour) for the batch tables, (hour, track) for the
/// realtime ones (docs/architecture.md, the stores).
public enum KeyOrder: Sendable {
    case trackThenHour, hourThenTrack
}

/// Sorts per-play records by (track, hour) or (hour, track) once per batch unit or flush
/// (`DimensionCounts`, `ListenerCounts`, `HourCounts`): appending a record per play and sorting
/// them afterwards writes memory sequentially, where a hash table would take a cache miss per play.
enum TrackHourSort {
    /// A least-significant-digit radix sort on the key `trackID << hourBits | (hour − first hour)`
    /// (or `(hour − first hour) << trackBits | trackID`), linear in the records (a comparison sort
    /// of a unit's records cost more than counting them did), or a comparison sort when the key
    /// does not fit in 64 bits. Stable; `buffer` is the second buffer, kept by the caller between calls.
    static func sort<Record: TrackHourRecord>(_ records: inout [Record], buffer sortBuffer: inout [Record],
                                              order: KeyOrder = .trackThenHour) {
        guard records.count > 1 else { return }
        var firstHour = Int64.max, lastHour = Int64.min, largestTrack: Int64 = 0
        for record in records {
            firstHour = min(firstHour, record.hour)
            lastHour = max(lastHour, record.hour)
            largestTrack = max(largestTrack, record.trackID)
        }
        let hourBits = 64 - UInt64(lastHour - firstHour).leadingZeroBitCount
        let trackBits = 64 - UInt64(largestTrack).leadingZeroBitCount
        let keyBits = hourBits + trackBits
        guard keyBits <= 64 else {
            switch order {
            case .trackThenHour: records.sort { $0.trackID != $1.trackID ? $0.trackID < $1.trackID : $0.hour < $1.hour }
            case .hourThenTrack: records.sort { $0.hour != $1.hour ? $0.hour < $1.hour : $0.trackID < $1.trackID }
            }
            return
        }
        // The key's high part and the shift that puts it above the low part.
        let (highIsTrack, lowBits) = order == .trackThenHour ? (true, UInt64(hourBits)) : (false, UInt64(trackBits))
        let digitBits = 11, digitMask = (1 << digitBits) - 1
        var offsets = [Int](repeating: 0, count: 1 << digitBits)
        sortBuffer.removeAll(keepingCapacity: true)
        sortBuffer.append(contentsOf: records)
        var shift = 0
        while shift < keyBits {
            records.withUnsafeBufferPointer { source in
                sortBuffer.withUnsafeMutableBufferPointer { target in
                    @inline(__always) func digit(_ record: Record) -> Int {
                        let (track, hour) = (UInt64(record.trackID), UInt64(record.hour - firstHour))
                        let key = highIsTrack ? track << lowBits | hour : hour << lowBits | track
                        return Int(truncatingIfNeeded: key >> UInt64(shift)) & digitMask
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

extension Array where Element: Comparable {
    /// Sorts `range` in place: an insertion sort for the few elements a (track, hour) key
    /// usually has, where a general sort's set-up costs more than the sorting.
    @inline(__always)
    mutating func sortFew(in range: Range<Int>) {
        guard range.count > 1 else { return }
        guard range.count <= 32 else {
            self[range].sort()
            return
        }
        for index in range.lowerBound + 1..<range.upperBound {
            let element = self[index]
            var place = index
            while place > range.lowerBound && self[place - 1] > element {
                self[place] = self[place - 1]
                place -= 1
            }
            self[place] = element
        }
    }
}
