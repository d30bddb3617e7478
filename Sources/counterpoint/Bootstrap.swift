import Foundation
import Logging
import Metrics
import Prometheus

/// Process-wide set-up that only the executable does: where logs go, which metrics
/// backend records, and how the process waits for SIGINT/SIGTERM.
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
        MetricsSystem.bootstrap(factory)
        return {
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return String(decoding: buffer, as: UTF8.self)
        }
    }

    /// Blocks the calling thread until SIGINT or SIGTERM arrives; returns the signal.
    @discardableResult
    static func waitForTermination() -> Int32 {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        var received: Int32 = 0
        sigwait(&signals, &received)
        return received
    }

    /// Blocks SIGINT/SIGTERM in this thread and every thread started after, so that only
    /// `waitForTermination` receives them. Call first thing in a long-running command.
    static func blockTerminationSignals() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }
}
