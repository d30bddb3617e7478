/// A record of one play kept for aggregation, keyed by (subject, hour).
protocol KeyHourRecord {
    var id: Int64 { get }
    var hour: Int64 { get }
}

/// The order of a store's keys: (subject, hour) for the batch tables, (hour, subject) for the
/// realtime ones (docs/architecture.md, the stores).
public enum KeyOrder: Sendable {
    case idThenHour, hourThenID
}

/// Sorts per-play records by (subject, hour) or (hour, subject) once per batch unit or flush
/// (`DimensionCounts`, `ListenerCounts`, `HourCounts`): appending a record per play and sorting
/// them afterwards writes memory sequentially, where a hash table would take a cache miss per play.
enum KeyHourSort {
    /// A least-significant-digit radix sort on the key `id << hourBits | (hour − first hour)`
    /// (or `(hour − first hour) << idBits | id`), linear in the records (a comparison sort
    /// of a unit's records cost more than counting them did), or a comparison sort when the key
    /// does not fit in 64 bits. Stable; `buffer` is the second buffer, kept by the caller between calls.
    static func sort<Record: KeyHourRecord>(_ records: inout [Record], buffer sortBuffer: inout [Record],
                                            order: KeyOrder = .idThenHour) {
        guard records.count > 1 else { return }
        var firstHour = Int64.max, lastHour = Int64.min, largestID: Int64 = 0
        for record in records {
            firstHour = min(firstHour, record.hour)
            lastHour = max(lastHour, record.hour)
            largestID = max(largestID, record.id)
        }
        let hourBits = 64 - UInt64(lastHour - firstHour).leadingZeroBitCount
        let idBits = 64 - UInt64(largestID).leadingZeroBitCount
        let keyBits = hourBits + idBits
        guard keyBits <= 64 else {
            switch order {
            case .idThenHour: records.sort { $0.id != $1.id ? $0.id < $1.id : $0.hour < $1.hour }
            case .hourThenID: records.sort { $0.hour != $1.hour ? $0.hour < $1.hour : $0.id < $1.id }
            }
            return
        }
        // The key's high part and the shift that puts it above the low part.
        let (highIsID, lowBits) = order == .idThenHour ? (true, UInt64(hourBits)) : (false, UInt64(idBits))
        let digitBits = 11, digitMask = (1 << digitBits) - 1
        var offsets = [Int](repeating: 0, count: 1 << digitBits)
        sortBuffer.removeAll(keepingCapacity: true)
        sortBuffer.append(contentsOf: records)
        var shift = 0
        while shift < keyBits {
            records.withUnsafeBufferPointer { source in
                sortBuffer.withUnsafeMutableBufferPointer { target in
                    @inline(__always) func digit(_ record: Record) -> Int {
                        let (id, hour) = (UInt64(record.id), UInt64(record.hour - firstHour))
                        let key = highIsID ? id << lowBits | hour : hour << lowBits | id
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
    /// Sorts `range` in place: an insertion sort for the few elements a (subject, hour) key
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
