import Metrics

/// The archiver's swift-metrics handles, created once (creating one goes through the factory's lock).
struct ArchiveMetrics {
    let events = Counter(label: "counterpoint_archive_events_total")
    let lateEvents = Counter(label: "counterpoint_archive_late_events_total")
    let invalidMessages = Counter(label: "counterpoint_archive_invalid_messages_total")
    let skippedMessages = Counter(label: "counterpoint_archive_skipped_messages_total")
    let closedHours = Counter(label: "counterpoint_archive_hour_logs_closed_total")
    let offsetResets = Counter(label: "counterpoint_archive_offset_resets_total")
    let gapSkippedMessages = Counter(label: "counterpoint_archive_offset_gap_skipped_messages_total")
    let commitFailures = Counter(label: "counterpoint_archive_commit_failures_total")
    let fsyncDuration = Timer(label: "counterpoint_archive_fsync_duration_seconds", preferredDisplayUnit: .seconds)
    let openHours = Gauge(label: "counterpoint_archive_open_hour_logs")
    let streamTime = Gauge(label: "counterpoint_archive_stream_time_seconds")
}

extension Archiver {
    /// The HELP text of every metric above, for the executable's Prometheus exposition.
    public static let metricHelp: [String: String] = [
        "counterpoint_archive_events_total": "Valid events written to the event logs.",
        "counterpoint_archive_late_events_total": "Events written to late files because their hour was already closed.",
        "counterpoint_archive_invalid_messages_total": "Messages that are not valid events, archived for batch to count as rejected.",
        "counterpoint_archive_skipped_messages_total": "Tombstones and blank messages: nothing to archive.",
        "counterpoint_archive_hour_logs_closed_total": "Hourly logs the archiver has closed (marked complete for batch).",
        "counterpoint_archive_offset_resets_total": "Offset resets: the broker no longer had the messages to archive.",
        "counterpoint_archive_offset_gap_skipped_messages_total": "Messages the broker deleted before the archiver read them.",
        "counterpoint_archive_commit_failures_total": "Offset commits that failed and were retried at the next checkpoint.",
        "counterpoint_archive_fsync_duration_seconds": "Duration of one fsync of every open event-log file.",
        "counterpoint_archive_open_hour_logs": "Hourly logs open for writing.",
        "counterpoint_archive_stream_time_seconds": "The archiver's stream time: the newest event time consumed, held back by partitions with a backlog.",
    ]
}
