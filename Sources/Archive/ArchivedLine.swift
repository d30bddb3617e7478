#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CounterpointCore

/// How one Kafka message value becomes one NDJSON line, unchanged in meaning.
enum ArchivedLine {
    /// Calls `body` with `value` as it is when it holds no line break, else with a copy in
    /// which every `\n` and `\r` is a tab.
    ///
    /// A message is one line of the log, so raw line breaks cannot stay, and the tab keeps the
    /// value's meaning for the parser exactly: between JSON tokens a tab is whitespace like a
    /// line break (a pretty-printed event stays the same valid event), and inside a JSON string
    /// a raw tab is a control character like a raw line break (an invalid event stays invalid,
    /// for the same reason). Nothing else is changed.
    static func withLine<Result>(of value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        guard containsLineBreak(value) else { return try body(value) }
        var copy = Array(value)
        for index in copy.indices where copy[index] == UInt8(ascii: "\n") || copy[index] == UInt8(ascii: "\r") {
            copy[index] = UInt8(ascii: "\t")
        }
        return try copy.withUnsafeBytes { try body($0) }
    }

    static func containsLineBreak(_ value: UnsafeRawBufferPointer) -> Bool {
        guard let base = value.baseAddress, value.count > 0 else { return false }
        return memchr(base, Int32(UInt8(ascii: "\n")), value.count) != nil
            || memchr(base, Int32(UInt8(ascii: "\r")), value.count) != nil
    }

    /// The hour whose file takes a message that is not a valid event (it has no `occurred_at`
    /// to go by): the hour of its Kafka timestamp — when it was produced — or of `now` when it
    /// has none in the range events may have. `batch` then counts it as rejected in the run
    /// that covers that hour.
    static func fallbackHour(kafkaTimestampMilliseconds: Int64?, nowMilliseconds: Int64) -> Hour {
        let range = EventLimits.earliestMilliseconds..<EventLimits.latestMilliseconds
        if let stamp = kafkaTimestampMilliseconds, range.contains(stamp) {
            return Hour(epochMilliseconds: stamp)
        }
        return Hour(epochMilliseconds: min(max(nowMilliseconds, range.lowerBound), range.upperBound - 1))
    }
}
