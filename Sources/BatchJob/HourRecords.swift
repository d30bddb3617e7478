import CounterpointCore
import Foundation

/// The valid, in-range events one worker read from unpartitioned files, kept per UTC hour as
/// compact records — track id (8 bytes), id length (1 byte), the `event_id`'s bytes, then the
/// play's dimensions (waveform bucket, client, country: a byte each for "absent" or a length,
/// then the value's bytes), then a byte of the event's type (`EventType.rawValue << 1`) and
/// whether a listener id (8 bytes) follows (bit 0) — until the hour's unit de-duplicates and
/// counts them. A 26-character ULID takes 35 bytes instead
/// of the ~200 of its JSON line, and the full id is kept (not a hash of it), so that
/// de-duplication stays exact.
///
/// Memory is bounded by `budget`: when the buffered records exceed it, every hour's buffer is
/// appended to that hour's spill file in `directory` and emptied. Reading an hour back then
/// holds that hour's records only — memory is bounded by the largest hour, not by the file.
///
/// A value: the worker that parses fills its own, as a local variable (no class property, so
/// no exclusivity check at run time per record), and hands it over when the read ends; the
/// hour units then only read it, one hour each, from any worker.
struct HourRecords: Sendable {
    private let directory: String
    private let name: String
    private let budget: Int
    private var buffers: [[UInt8]] = []
    private var indexOfHour: [Hour: Int] = [:]
    private var hourOfIndex: [Hour] = []
    private var spilledHours = Set<Hour>()
    private var buffered = 0
    /// The buffer last appended to: events of a file come in runs of one hour.
    private var lastHour = Hour(index: .min)
    private var lastIndex = 0
    /// Record bytes per hour index, buffered and spilled, to size the units.
    private var sizes: [Int] = []

    init(directory: String, name: String, budget: Int) {
        self.directory = directory
        self.name = name
        self.budget = max(1, budget)
    }

    /// Record bytes per hour, buffered and spilled.
    var bytesByHour: [Hour: Int] {
        Dictionary(uniqueKeysWithValues: zip(hourOfIndex, sizes))
    }

    @inline(__always)
    mutating func append(trackID: Int64, creatorID: Int64, type: EventType, eventID: EventID, hour: Hour,
                         dimensions: PlayDimensions) throws {
        if hour != lastHour {
            if let index = indexOfHour[hour] {
                lastIndex = index
            } else {
                lastIndex = buffers.count
                indexOfHour[hour] = lastIndex
                hourOfIndex.append(hour)
                buffers.append([])
                sizes.append(0)
            }
            lastHour = hour
        }
        // One access to the hour's buffer for the whole record, not one per field.
        let size = Self.appendRecord(to: &buffers[lastIndex], trackID: trackID, creatorID: creatorID, type: type, eventID: eventID,
                                     dimensions: dimensions)
        sizes[lastIndex] += size
        buffered += size
        if buffered > budget { try spill() }
    }

    /// Appends one record to `buffer`; returns its size in bytes.
    @inline(__always)
    private static func appendRecord(to buffer: inout [UInt8], trackID: Int64, creatorID: Int64, type: EventType, eventID: EventID,
                                     dimensions: PlayDimensions) -> Int {
        let before = buffer.count
        withUnsafeBytes(of: trackID.littleEndian) { buffer.append(contentsOf: $0) }
        buffer.append(UInt8(eventID.count))
        eventID.withUnsafeBytes { buffer.append(contentsOf: $0) }
        buffer.append(dimensions.waveformBucket.map { UInt8($0) } ?? absent)
        appendValue(dimensions.client, to: &buffer)
        appendValue(dimensions.country, to: &buffer)
        buffer.append(type.rawValue << 2 | (creatorID != 0 ? 2 : 0) | (dimensions.listenerID != nil ? 1 : 0))
        if creatorID != 0 { withUnsafeBytes(of: creatorID.littleEndian) { buffer.append(contentsOf: $0) } }
        if let listenerID = dimensions.listenerID { withUnsafeBytes(of: listenerID.littleEndian) { buffer.append(contentsOf: $0) } }
        return buffer.count - before
    }

    @inline(__always)
    private static func appendValue(_ value: DimensionValue?, to buffer: inout [UInt8]) {
        guard let value else {
            buffer.append(absent)
            return
        }
        buffer.append(value.count)
        value.withBytes { buffer.append(contentsOf: $0) }
    }

    /// Appends every buffered hour to its spill file and frees the buffers.
    mutating func spill() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (index, hour) in hourOfIndex.enumerated() where !buffers[index].isEmpty {
            let path = spillPath(hour)
            if !FileManager.default.fileExists(atPath: path) {
                guard FileManager.default.createFile(atPath: path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
                }
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: buffers[index])
            spilledHours.insert(hour)
            buffers[index] = []
        }
        buffered = 0
    }

    /// Marks an absent bucket or value (buckets are 0…99, values at most 32 bytes).
    private static let absent: UInt8 = 0xFF

    /// Calls `body` with the track id, creator id (0: none), type, `event_id` and dimensions of every
    /// record of `hour`, spilled ones first.
    func forEachRecord(of hour: Hour, _ body: (Int64, Int64, EventType, EventID, PlayDimensions) -> Void) throws {
        if spilledHours.contains(hour) {
            let data = try Data(contentsOf: URL(fileURLWithPath: spillPath(hour)))
            data.withUnsafeBytes { Self.decode($0, body) }
        }
        if let index = indexOfHour[hour] {
            buffers[index].withUnsafeBytes { Self.decode($0, body) }
        }
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, _ body: (Int64, Int64, EventType, EventID, PlayDimensions) -> Void) {
        // Only whole records of valid values were written; a torn spill file cannot happen
        // within one run.
        var offset = 0
        while offset + 9 <= bytes.count {
            let trackID = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
            let length = Int(bytes[offset + 8])
            let id = EventID(validating: UnsafeRawBufferPointer(rebasing: bytes[(offset + 9)..<(offset + 9 + length)]))
            offset += 9 + length
            var dimensions = PlayDimensions()
            if bytes[offset] != absent { dimensions.waveformBucket = Int8(bytes[offset]) }
            offset += 1
            dimensions.client = readValue(bytes, &offset)
            dimensions.country = readValue(bytes, &offset)
            let flags = bytes[offset]
            offset += 1
            var creatorID: Int64 = 0
            if flags & 2 != 0 {
                creatorID = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
                offset += 8
            }
            if flags & 1 != 0 {
                dimensions.listenerID = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
                offset += 8
            }
            if let id, let type = EventType(rawValue: flags >> 2) { body(trackID, creatorID, type, id, dimensions) }
        }
    }

    @inline(__always)
    private static func readValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> DimensionValue? {
        let count = bytes[offset]
        offset += 1
        guard count != absent else { return nil }
        defer { offset += Int(count) }
        return DimensionValue(copying: bytes.baseAddress! + offset, count: Int(count))
    }

    private func spillPath(_ hour: Hour) -> String {
        (directory as NSString).appendingPathComponent("\(name)-\(hour.index).records")
    }
}
