import CounterpointCore
import CounterStore
import Runtime

/// `GET /v1/status`: what each layer has done, for operators and the dashboard — batch
/// coverage and recent runs, realtime partitions, offsets and lag, and rejected events.
struct StatusAnswer: Sendable {
    static let recentRunCount = 10

    let liveStatus: (@Sendable () -> LiveStatus?)?
    let health: ComponentHealth?

    func render(reader: CounterReader, counts: CountAnswers) throws -> [UInt8] {
        // One snapshot for the whole answer, as every count answer reads one.
        let stores = try reader.status(recentRuns: Self.recentRunCount)
        let (coverage, runs, partitions, freshness) = (stores.coverage, stores.recentRuns, stores.partitions, stores.freshness)
        let live = liveStatus?()

        var json = JSONWriter(capacity: 2048)
        json.beginObject()

        json.key("batch")
        json.beginObject()
        json.key("coverage")
        json.beginArray()
        for range in coverage.ranges {
            json.beginObject()
            json.key("from"); json.value(range.lower)
            json.key("to"); json.value(range.upper)
            json.endObject()
        }
        json.endArray()
        json.key("covered_until"); json.optional(coverage.coveredUntil) { $0.value($1) }
        json.key("runs")
        json.beginArray()
        for run in runs { write(run, into: &json) }
        json.endArray()
        json.endObject()

        json.key("realtime")
        json.beginObject()
        json.key("last_flush_at"); json.optional(freshness.realtimeFlushedAt) { $0.time(epochMilliseconds: $1) }
        json.key("lag_events"); json.optional(freshness.realtimeLagEvents) { $0.value($1) }
        json.key("events_per_second"); json.optional(live?.realtime.eventsPerSecond) { $0.value($1) }
        json.key("partitions")
        json.beginArray()
        for partition in partitions {
            json.beginObject()
            json.key("topic"); json.value(partition.topic)
            json.key("partition"); json.value(Int64(partition.partition))
            json.key("next_offset"); json.value(partition.nextOffset)
            json.key("high_watermark"); json.optional(partition.highWatermark) { $0.value($1) }
            json.key("lag"); json.optional(partition.lag) { $0.value($1) }
            json.endObject()
        }
        json.endArray()
        json.key("rejected")
        if let live {
            write(live.realtime.rejections, into: &json)
        } else {
            json.null()
        }
        json.key("fenced_flushes"); json.optional(live?.realtime.fencedFlushes) { $0.value($1) }
        json.key("offset_gaps")
        json.beginArray()
        for gap in live?.realtime.offsetGaps ?? [] {
            json.beginObject()
            json.key("topic"); json.value(gap.topic)
            json.key("partition"); json.value(Int64(gap.partition))
            json.key("expected_offset"); json.value(gap.expectedOffset)
            json.key("resumed_offset"); json.value(gap.resumedOffset)
            json.key("kind"); json.value(gap.wentBack ? "went_back" : "skipped")
            json.key("skipped_events"); json.value(gap.skippedEvents)
            json.key("detected_at"); json.time(epochMilliseconds: gap.detectedAt)
            json.endObject()
        }
        json.endArray()
        json.endObject()

        json.key("archive")
        if let archive = live?.archive {
            json.beginObject()
            json.key("open_hours")
            json.beginArray()
            for hour in archive.openHours { json.value(hour) }
            json.endArray()
            json.key("last_closed_hour"); json.optional(archive.lastClosedHour) { $0.value($1) }
            json.key("events_archived"); json.value(archive.eventsArchived)
            json.key("late_events"); json.value(archive.lateEvents)
            json.key("invalid_messages"); json.value(archive.invalidMessages)
            json.key("offset_gap_skipped_messages"); json.value(archive.gapSkippedMessages)
            json.endObject()
        } else {
            json.null()
        }

        // Every long-running component of the process and what it is doing; empty for `serve`.
        json.key("components")
        json.components(health?.reports() ?? [])

        // The latest hour holding merged plays: where a page whose period holds nothing can go.
        json.key("latest_counts")
        json.optional(stores.latestCounts) { json, latest in
            json.beginObject()
            json.key("hour"); json.value(latest.hour)
            json.key("source"); json.value(latest.source.rawValue)
            json.endObject()
        }

        counts.writeFreshness(freshness, into: &json)
        json.endObject()
        return json.bytes
    }

    private func write(_ run: BatchRun, into json: inout JSONWriter) {
        json.beginObject()
        json.key("id"); json.value(run.id)
        json.key("from"); json.value(run.range.lower)
        json.key("to"); json.value(run.range.upper)
        json.key("started_at"); json.time(epochMilliseconds: run.startedAt)
        json.key("finished_at"); json.time(epochMilliseconds: run.finishedAt)
        json.key("events_read"); json.value(run.eventsRead)
        json.key("valid"); json.value(run.valid)
        json.key("duplicates"); json.value(run.duplicates)
        json.key("rejected"); json.value(run.rejected)
        json.key("rejected_by_reason")
        json.beginObject()
        for (reason, count) in run.rejectedByReason.sorted(by: { $0.key < $1.key }) {
            json.key(dynamic: reason); json.value(count)
        }
        json.endObject()
        json.key("tracks"); json.value(run.tracks)
        json.key("rows"); json.value(run.rows)
        json.endObject()
    }

    private func write(_ rejections: RejectionLog, into json: inout JSONWriter) {
        json.beginObject()
        json.key("total"); json.value(rejections.total)
        json.key("by_reason")
        json.beginObject()
        for (reason, count) in rejections.counts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            json.key(dynamic: reason.rawValue); json.value(count)
        }
        json.endObject()
        json.key("sample")
        json.beginArray()
        for sample in rejections.samples {
            json.beginObject()
            json.key("reason"); json.value(sample.reason.rawValue)
            json.key("source"); json.value(sample.source)
            json.key("message"); json.value(sample.message)
            json.key("payload_prefix"); json.value(sample.payloadPrefix)
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }
}

extension JSONWriter {
    /// Components as `/v1/status` and `/readyz` list them: name, state, reason (what a starting
    /// component waits for, what a degraded or failed one suffers from) and since when.
    mutating func components(_ reports: [ComponentReport]) {
        beginArray()
        for report in reports {
            beginObject()
            key("name"); value(report.name)
            key("state"); value(report.state.name)
            key("reason"); optional(report.state.reason) { $0.value($1) }
            key("since"); time(epochMilliseconds: report.since)
            endObject()
        }
        endArray()
    }
}
