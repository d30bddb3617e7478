import CounterpointCore
import Metrics

/// The consumer's swift-metrics handles, created once so that recording takes no factory lock.
struct RealtimeMetrics {
    /// Valid plays counted (committed or not yet flushed).
    let ingested = Counter(label: "counterpoint_ingest_events_total")
    let rejected: [RejectReason: Counter] = Dictionary(uniqueKeysWithValues: RejectReason.allCases.map {
        ($0, Counter(label: "counterpoint_rejected_events_total", dimensions: [("reason", $0.rawValue)]))
    })
    /// How long one flush transaction took, committed or fenced.
    let flushDuration = Timer(label: "counterpoint_flush_duration_seconds", preferredDisplayUnit: .seconds)
    /// (track, hour) rows written by the last committed flush.
    let flushRows = Gauge(label: "counterpoint_flush_rows")
    /// Σ (high watermark − next offset to consume) over the assigned partitions, at the last flush.
    let lag = Gauge(label: "counterpoint_consumer_lag_events")
    let fencedFlushes = Counter(label: "counterpoint_fenced_flushes_total")
    /// Realtime rows deleted because the batch layer covers their hours (docs/architecture.md compaction).
    let compactedRows = Counter(label: "counterpoint_realtime_compacted_rows_total")
    /// Flushes the store rolled back (a full disk): their counts are read again from Kafka.
    let failedFlushes = Counter(label: "counterpoint_failed_flushes_total")
    /// Offset resets forwards: the broker no longer had the offsets the store asked for (retention).
    let offsetGaps = Counter(label: "counterpoint_offset_gaps_total")
    /// Offset resets backwards: a partition's log ended before the offset the store asked for.
    let offsetsWentBack = Counter(label: "counterpoint_offsets_went_back_total")
    /// Events deleted by the broker before they were consumed: the batch layer must heal them.
    let skippedEvents = Counter(label: "counterpoint_offset_gap_skipped_events_total")
}

extension RealtimeConsumer {
    /// The HELP text of every metric above, for the executable's Prometheus exposition.
    public static let metricHelp: [String: String] = [
        "counterpoint_ingest_events_total": "Valid plays counted by the realtime consumer (committed or not yet flushed).",
        "counterpoint_rejected_events_total": "Events the realtime consumer rejected, by reason.",
        "counterpoint_flush_duration_seconds": "Duration of one realtime flush transaction (counts and offsets).",
        "counterpoint_flush_rows": "(track, hour) rows written by the last committed realtime flush.",
        "counterpoint_consumer_lag_events": "Events the realtime consumer is behind the broker, summed over its partitions, at the last flush.",
        "counterpoint_fenced_flushes_total": "Realtime flushes discarded because another consumer had written their partitions first.",
        "counterpoint_failed_flushes_total": "Realtime flushes the store rolled back (e.g. a full disk); their events are read again.",
        "counterpoint_realtime_compacted_rows_total": "Realtime rows deleted because the batch layer has covered their hours.",
        "counterpoint_offset_gaps_total": "Offset resets forwards: the broker no longer had the offsets the realtime store asked for.",
        "counterpoint_offsets_went_back_total": "Offset resets backwards: a partition's log ended before the offset the realtime store asked for (topic made again, or the end of its log lost).",
        "counterpoint_offset_gap_skipped_events_total": "Events the broker deleted before the realtime consumer read them; the batch layer heals them.",
    ]
}
