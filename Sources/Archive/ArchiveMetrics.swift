import Metrics

/// The archiver's swift-metrics handles, created once (creating one goes through the factory's lock).
struct ArchiveMetrics {
    let events = Counter(label: "counterpoint_archive_events_total")
    let lateEvents = Counter(label: "counterpoint_archive_late_events_total")
    let invalidMessages = Counter(label: "counterpoint_archive_invalid_messages_total")
    let skippedMessages = Counter(label: "counterpoint_archive_skipped_messages_total")
    let closedHours = Counter(label: "counterpoint_archive_closed_hours_total")
    let offsetResets = Counter(label: "counterpoint_archive_offset_resets_total")
    let gapSkippedMessages = Counter(label: "counterpoint_archive_offset_gap_skipped_messages_total")
    let commitFailures = Counter(label: "counterpoint_archive_commit_failures_total")
    let fsyncDuration = Timer(label: "counterpoint_archive_fsync_duration_seconds", preferredDisplayUnit: .seconds)
    let openHours = Gauge(label: "counterpoint_archive_open_hours")
    let streamTime = Gauge(label: "counterpoint_archive_stream_time_seconds")
}
