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
    /// Realtime rows deleted because the batch layer covers their hours (SPEC §3 compaction).
    let compactedRows = Counter(label: "counterpoint_realtime_compacted_rows_total")
    /// Offset resets: the broker no longer had the offsets the store asked for (retention).
    let offsetGaps = Counter(label: "counterpoint_offset_gaps_total")
    /// Events deleted by the broker before they were consumed: the batch layer must heal them.
    let skippedEvents = Counter(label: "counterpoint_offset_gap_skipped_events_total")
}
