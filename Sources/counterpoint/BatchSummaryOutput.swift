import BatchJob
import CounterpointCore
import Foundation

extension BatchSummary {
    /// The `--json` summary: one object, keys in snake case.
    var jsonObject: [String: Any] {
        [
            "ranges": ranges.map { ["from": $0.lower.description, "to": $0.upper.description] },
            "files": files, "bytes_read": bytesRead, "events_read": eventsRead, "valid": valid,
            "duplicates": duplicates, "outside_range": outsideRange, "counted": counted,
            "rejected": rejections.total,
            "rejected_by_reason": Dictionary(uniqueKeysWithValues: rejections.counts.map { ($0.key.rawValue, $0.value) }),
            "rejected_sample": rejections.samples.map {
                ["reason": $0.reason.rawValue, "source": $0.source, "message": $0.message, "payload_prefix": $0.payloadPrefix]
            },
            "tracks": tracks, "creators": creators, "hours": hours, "hours_processed": hours, "hours_skipped": hoursSkipped,
            "hours_with_files_gone": hoursWithFilesGone.map { ["from": $0.lower.description, "to": $0.upper.description] }, "rows": rows, "seconds": seconds, "events_per_second": eventsPerSecond,
        ]
    }

    /// The summary for people.
    var text: String {
        var lines: [String] = []
        let rangeText = ranges.map(\.description).joined(separator: ", ")
        let filesGone = hoursWithFilesGone.isEmpty ? "" : "; kept as they are, since files they were covered from are gone: "
            + hoursWithFilesGone.map(\.description).joined(separator: ", ") + " (--from/--to rebuilds them from the files that remain)"
        if hours == 0 {
            return "batch: nothing changed — 0 hours processed, \(hoursSkipped.formatted()) hours skipped as unchanged" + filesGone
        }
        var head = "batch: rebuilt \(hours) hours \(rangeText) from \(files) files (\(ByteCount(bytesRead)))"
        if hoursSkipped > 0 { head += "; \(hoursSkipped.formatted()) hours skipped as unchanged" }
        lines.append(head + filesGone)
        lines.append("  events read  \(pad(eventsRead))")
        lines.append("  valid        \(pad(valid))   duplicates \(duplicates.formatted()), outside the range \(outsideRange.formatted())")
        var rejectedLine = "  rejected     \(pad(rejections.total))"
        if !rejections.counts.isEmpty {
            rejectedLine += "   " + rejections.counts.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { "\($0.key.rawValue) \($0.value.formatted())" }.joined(separator: ", ")
        }
        lines.append(rejectedLine)
        lines.append("  counted      \(pad(counted))   events of \(tracks.formatted()) tracks in \(rows.formatted()) rows"
            + (creators > 0 ? ", naming \(creators.formatted()) creators" : ""))
        lines.append("  took \(String(format: "%.2f", seconds)) s, \(String(format: "%.2f", eventsPerSecond / 1e6)) M events/s")
        if !rejections.samples.isEmpty {
            lines.append("  rejected samples:")
            for sample in rejections.samples.prefix(5) {
                lines.append("    \(sample.source) \(sample.reason.rawValue): \(sample.message)")
            }
        }
        return lines.joined(separator: "\n")
    }

    private func pad(_ value: Int) -> String {
        let text = value.formatted()
        return String(repeating: " ", count: max(0, 12 - text.count)) + text
    }
}
