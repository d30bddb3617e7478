import Archive
import Foundation
import Logging
import Metrics
import Prometheus
import Reader
import Realtime
import Runtime

/// Process-wide set-up that only the executable does: where logs go, which metrics
/// backend records. (Commands run their services through the `Application` a builder returns.)
enum Bootstrap {
    /// Logs to stderr, one line per event, with structured metadata.
    static func logging(level: String) -> Logger {
        let level = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "counterpoint")
    }

    /// Routes swift-metrics into a Prometheus registry; returns its text renderer for `/metrics`.
    static func metrics() -> @Sendable () -> String {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        let help = RealtimeConsumer.metricHelp.merging(Archiver.metricHelp) { $1 }
            .merging(ReaderServer.metricHelp) { $1 }.merging(ComponentHealth.metricHelp) { $1 }
        MetricsSystem.bootstrap(HelpfulMetricsFactory(prometheus: factory, help: help))
        return {
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return String(decoding: buffer, as: UTF8.self)
        }
    }
}
