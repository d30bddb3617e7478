import Foundation
import Runtime

extension ReplaySummary {
    /// The `--json` summary: one object, keys in snake case, latencies in milliseconds.
    public var jsonObject: [String: Any] {
        [
            "topic": topic, "events": events, "bytes": bytes, "unkeyed_events": unkeyedEvents,
            "blank_lines_skipped": blankLinesSkipped, "passes": passes,
            "seconds": seconds, "flush_seconds": flushSeconds, "events_per_second": eventsPerSecond,
            "target_rate": targetRate.map { $0 as Any } ?? NSNull(), "schedule_restarts": scheduleRestarts,
            "stop_reason": stopReason.rawValue,
            "delivered": delivered, "delivery_errors": failed, "delivery_errors_by_error": deliveryErrors,
            "undelivered": undelivered,
            "delivery_latency_ms": [
                "p50": milliseconds(latency.percentile(0.5)), "p90": milliseconds(latency.percentile(0.9)),
                "p99": milliseconds(latency.percentile(0.99)), "max": milliseconds(latency.maximum),
                "mean": milliseconds(latency.mean),
            ],
        ]
    }

    /// The summary for people.
    public var text: String {
        let target = targetRate.map { " (target \(Self.rate($0)))" } ?? " (unpaced)"
        var lines = [
            "replay: sent \(events.formatted()) events (\(Self.megabytes(bytes))) to \(topic) in "
                + String(format: "%.2f", seconds) + " s: \(Self.rate(eventsPerSecond))\(target)",
            "  delivered \(delivered.formatted()), delivery errors \(failed.formatted()), undelivered \(undelivered.formatted())"
                + (deliveryErrors.isEmpty ? "" : " — " + deliveryErrors.sorted { $0.key < $1.key }
                    .map { "\($0.key) \($0.value.formatted())" }.joined(separator: ", ")),
            "  delivery latency p50 \(Self.format(latency.percentile(0.5))), p90 \(Self.format(latency.percentile(0.9))), "
                + "p99 \(Self.format(latency.percentile(0.99))), max \(Self.format(latency.maximum))",
            "  \(unkeyedEvents.formatted()) invalid lines sent without a key, \(blankLinesSkipped.formatted()) blank lines skipped, "
                + "\(passes) \(passes == 1 ? "pass" : "passes"), stopped by \(stopReason.rawValue.replacingOccurrences(of: "_", with: " ")), "
                + "flush " + String(format: "%.2f", flushSeconds) + " s",
        ]
        if scheduleRestarts > 0 {
            lines.append("  fell behind the target rate \(scheduleRestarts.formatted()) times (the producer applied backpressure)")
        }
        return lines.joined(separator: "\n")
    }

    private func milliseconds(_ duration: Duration) -> Double {
        (duration.seconds * 1e6).rounded() / 1e3
    }

    static func format(_ duration: Duration) -> String {
        String(format: "%.1f ms", duration.seconds * 1e3)
    }

    static func rate(_ eventsPerSecond: Double) -> String {
        "\(Int(eventsPerSecond.rounded()).formatted()) events/s"
    }

    static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1e6)
    }
}
