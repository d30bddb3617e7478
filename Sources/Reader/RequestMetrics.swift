import Metrics

/// Per-thread cache of the swift-metrics handles for HTTP requests, keyed by route and
/// status: creating a handle goes through the metrics factory's lock, recording on a cached
/// one does not. Consecutive requests mostly share route and status, so the last handles
/// are kept at hand and the dictionary is consulted only when they change.
struct RequestMetrics {
    private struct Key: Hashable {
        var route: String
        var status: Int
    }

    private struct Handles {
        var requests: Counter
        var duration: Timer
    }

    private var handles: [Key: Handles] = [:]
    private var last: (key: Key, handles: Handles)?

    mutating func record(route: String, status: Int, duration: Duration) {
        let key = Key(route: route, status: status)
        let current: Handles
        if let last, last.key == key {
            current = last.handles
        } else if let cached = handles[key] {
            current = cached
        } else {
            current = Handles(
                requests: Counter(label: "counterpoint_http_requests_total",
                                  dimensions: [("route", route), ("status", String(status))]),
                duration: Timer(label: "counterpoint_http_request_duration_seconds", dimensions: [("route", route)],
                                preferredDisplayUnit: .seconds))
            handles[key] = current
        }
        last = (key, current)
        current.requests.increment()
        current.duration.record(duration: duration)
    }

    /// Counts a request the HTTP layer refused before it reached a route.
    static func recordRejected(status: Int) {
        Counter(label: "counterpoint_http_requests_total",
                dimensions: [("route", "unmatched"), ("status", String(status))]).increment()
    }
}

extension ReaderServer {
    /// The HELP text of every metric of the reader, for the executable's Prometheus exposition.
    public static let metricHelp: [String: String] = [
        "counterpoint_http_requests_total": "HTTP requests answered, by route and status.",
        "counterpoint_http_request_duration_seconds": "Time to answer one HTTP request, by route.",
    ]
}
