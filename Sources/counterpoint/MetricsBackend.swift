import Metrics
import Prometheus

/// swift-metrics into a Prometheus registry, with HELP text: swift-metrics has no place for a
/// description, and `PrometheusMetricsFactory` registers every metric without one, so this
/// factory looks each name up in the catalogue the modules publish beside their metrics
/// (`RealtimeConsumer.metricHelp`, …) and registers it with that text. Removal goes to the
/// Prometheus factory, which knows how.
struct HelpfulMetricsFactory: MetricsFactory {
    let prometheus: PrometheusMetricsFactory
    let help: [String: String]

    private var registry: PrometheusCollectorRegistry { prometheus.registry }

    /// The metric's full name as given (no unit appended), with its HELP text.
    private func text(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help[name] ?? "Counterpoint metric \(name).")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: text(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: text(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: text(label), labels: dimensions) }
        let buckets = prometheus.valueHistogramBuckets[label] ?? prometheus.defaultValueHistogramBuckets
        return registry.makeValueHistogram(descriptor: text(label), labels: dimensions, buckets: buckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: text(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = prometheus.durationHistogramBuckets[label] ?? prometheus.defaultDurationHistogramBuckets
        return registry.makeDurationHistogram(descriptor: text(label), labels: dimensions, buckets: buckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { prometheus.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { prometheus.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { prometheus.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { prometheus.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { prometheus.destroyTimer(handler) }
}
