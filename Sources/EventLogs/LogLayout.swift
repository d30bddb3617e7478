#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CounterpointCore

/// Where event logs live on disk. The layout is fixed for the whole project: `generate` and the
/// archiver write it, `batch` and `replay` read it.
///
/// ```
/// <root>/<YYYY-MM-DD>/<HH>.ndjson[.gz]                  events whose occurred_at lies in that UTC hour
/// <root>/<YYYY-MM-DD>/<HH>.<segment>.ndjson[.gz]        more files of that hour (e.g. archiver segments)
/// <root>/<YYYY-MM-DD>/<HH>.late.ndjson[.gz]             events that arrived after the hour was closed
/// <root>/<YYYY-MM-DD>/<HH>.late.<segment>.ndjson[.gz]   more late files of that hour
/// <root>/<YYYY-MM-DD>/<HH>.closed                       marker: the hour is complete
/// ```
///
/// - `HH` is `00`…`23`, the date a valid UTC calendar date; `<segment>` is one or more of
///   `[A-Za-z0-9_-]` and is not `late` (which marks late files).
/// - The `.gz` suffix is a convention for people: readers decide gzip by the magic bytes `1f 8b`.
/// - Only the last two path components matter, so `root/2026-11-20/13.ndjson`,
///   `2026-11-20/13.ndjson` and `/any/where/2026-11-20/13.ndjson` all hold hour 2026-11-20T13.
/// - Every other regular file ending in `.ndjson`, `.jsonl`, `.json`, `.log` or `.gz` found in
///   a directory, and every file named explicitly that does not follow the layout, is an
///   *unpartitioned* log: its events may be of any hour.
/// - Files are NDJSON: one event per line, `\n` or `\r\n` line ends, the final line may lack `\n`.
public enum LogLayout {
    /// The path of one hour's log file. `segment` must match `[A-Za-z0-9_-]+` and not be `late`.
    public static func hourFilePath(root: String, hour: Hour, segment: String? = nil,
                                    late: Bool = false, gzip: Bool = false) -> String {
        if let segment {
            precondition(isValidSegment(segment) && segment != "late", "invalid log segment name \(segment)")
        }
        var name = hourOfDayText(hour)
        if late { name += ".late" }
        if let segment { name += "." + segment }
        name += gzip ? ".ndjson.gz" : ".ndjson"
        return join(dayDirectory(root: root, hour: hour), name)
    }

    /// The path of the marker that says `hour` is complete.
    public static func closedMarkerPath(root: String, hour: Hour) -> String {
        join(dayDirectory(root: root, hour: hour), hourOfDayText(hour) + ".closed")
    }

    /// The directory holding the files of `hour`'s UTC day.
    public static func dayDirectory(root: String, hour: Hour) -> String {
        let days = hour.startOfDay.index / 24
        let date = UTCTime.civilFromDays(days)
        return join(root, digits(date.year, 4) + "-" + digits(date.month, 2) + "-" + digits(date.day, 2))
    }

    /// The hour (and lateness) of an hour log file, from the last two components of `relativePath`;
    /// `nil` when the path does not follow the layout (an unpartitioned log, or a marker).
    public static func parse(relativePath: String) -> (hour: Hour, late: Bool)? {
        guard case let .hourFile(hour, late, _)? = classify(path: relativePath) else { return nil }
        return (hour, late)
    }

    /// The hour a closed marker stands for, or `nil` when `relativePath` is not a marker.
    public static func parseClosedMarker(relativePath: String) -> Hour? {
        guard case let .closedMarker(hour)? = classify(path: relativePath) else { return nil }
        return hour
    }

    /// Writes the closed marker of `hour`, creating the day directory if needed. With `durable`
    /// the marker and its directory entry are fsynced, so a marker that survives a crash never
    /// promises an hour whose data did not (the writer fsyncs the data first).
    public static func markClosed(root: String, hour: Hour, durable: Bool = true) throws {
        let path = closedMarkerPath(root: root, hour: hour)
        try createDirectories(dayDirectory(root: root, hour: hour))
        let marker = try FileDescriptor(path: path, flags: O_WRONLY | O_CREAT, operation: "create")
        if durable {
            try marker.sync()
            try syncDirectory(containing: path)
        }
    }

    // MARK: Names

    enum Entry: Equatable {
        case hourFile(hour: Hour, late: Bool, segment: String?)
        case closedMarker(hour: Hour)
    }

    /// Classifies a path by its last two components: `<YYYY-MM-DD>/<HH>…`. Reads the path's bytes
    /// from the end and allocates only a segment's name: discovery classifies every entry of the
    /// history on every batch run.
    static func classify(path: String) -> Entry? {
        var path = path
        return path.withUTF8 { bytes in
            let slash = UInt8(ascii: "/")
            // The last two non-empty components, as `split(omittingEmptySubsequences:)` gives them.
            var end = bytes.count
            func component() -> Range<Int>? {
                while end > 0, bytes[end - 1] == slash { end -= 1 }
                guard end > 0 else { return nil }
                var start = end
                while start > 0, bytes[start - 1] != slash { start -= 1 }
                defer { end = start }
                return start..<end
            }
            guard let nameRange = component(), let dayRange = component(),
                  let day = parseDate(bytes[dayRange]) else { return nil }
            let name = bytes[nameRange]
            let first = name.startIndex
            guard name.count >= 3, name[first + 2] == UInt8(ascii: "."),
                  let hourOfDay = parseDigits(name[first..<first + 2]), hourOfDay < 24 else { return nil }
            let hour = Hour(index: day * 24 + hourOfDay)
            var parts = name[(first + 3)...].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)[...]
            func equals(_ part: Slice<UnsafeBufferPointer<UInt8>>?, _ text: StaticString) -> Bool {
                guard let part, part.count == text.utf8CodeUnitCount else { return false }
                return zip(part, UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)).allSatisfy { $0 == $1 }
            }
            if parts.count == 1, equals(parts.first, "closed") { return .closedMarker(hour: hour) }
            if equals(parts.last, "gz") { parts.removeLast() }
            guard equals(parts.last, "ndjson") else { return nil }
            parts.removeLast()
            var late = false
            if equals(parts.first, "late") { late = true; parts.removeFirst() }
            switch parts.count {
            case 0: return .hourFile(hour: hour, late: late, segment: nil)
            case 1:
                let segment = String(decoding: parts[parts.startIndex], as: UTF8.self)
                guard isValidSegment(segment), segment != "late" else { return nil }
                return .hourFile(hour: hour, late: late, segment: segment)
            default: return nil
            }
        }
    }

    /// Whether a file found in a directory is a log: a layout file or one of the log extensions.
    static func hasLogExtension(_ name: String) -> Bool {
        [".ndjson", ".jsonl", ".json", ".log", ".gz"].contains { name.hasSuffix($0) }
    }

    static func isValidSegment(_ segment: String) -> Bool {
        !segment.isEmpty && segment.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): true
            default: false
            }
        }
    }

    /// Days since 1970-01-01 of a `YYYY-MM-DD` name that is a real calendar date.
    private static func parseDate(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
        let at = name.startIndex
        guard name.count == 10, name[at + 4] == UInt8(ascii: "-"), name[at + 7] == UInt8(ascii: "-"),
              let year = parseDigits(name[at..<at + 4]), let month = parseDigits(name[at + 5..<at + 7]),
              let day = parseDigits(name[at + 8..<at + 10]),
              (1...12).contains(month), day >= 1, day <= UTCTime.daysInMonth(year: year, month: month)
        else { return nil }
        return UTCTime.daysFromCivil(year: year, month: month, day: day)
    }

    private static func parseDigits(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func hourOfDayText(_ hour: Hour) -> String {
        digits(hour.index - hour.startOfDay.index, 2)
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    // MARK: Directories

    /// Makes the log root if it is missing and checks that files can be made in it, so that a
    /// writer that cannot write there says so at start rather than at its first event. A disk
    /// too full to make the root does not stop the start: the writer reports that when it
    /// writes, and retries, as on any full disk.
    public static func prepareWritableRoot(_ root: String) throws {
        do {
            try createDirectories(root)
        } catch EventLogError.system(_, _, let code) where code == ENOSPC || code == EDQUOT {
            return
        }
        guard access(root, W_OK | X_OK) == 0 else {
            throw EventLogError.system(path: root, operation: "write files into", code: errno)
        }
    }

    /// `mkdir -p`.
    static func createDirectories(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o755) != 0 {
                let code = errno
                var info = stat()
                guard code == EEXIST, stat(prefix, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                    throw EventLogError.system(path: prefix, operation: "create directory", code: code)
                }
            }
            prefix += "/"
        }
    }

    /// Makes a new directory entry durable: fsync of the file alone does not persist its name.
    static func syncDirectory(containing path: String) throws {
        let directory = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[..<$0]) } ?? "."
        let handle = try FileDescriptor(path: directory.isEmpty ? "/" : directory, flags: O_RDONLY)
        try handle.sync()
    }
}
