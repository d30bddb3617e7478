import Metrics

/// Per-thread cache of the swift-metrics handles for HTTP requests, keyed by route and
/// status: creating a handle goes through the metrics factory's lock, recording on a cached
/// one does not.
struct RequestMetrics {
    private struct Key: Hashable {
        var route: String
        var status: Int
    }

    private var requests: [Key: Counter] = [:]
    private var durations: [String: Timer] = [:]

    mutating func record(route: String, status: Int, duration: Duration) {
        let key = Key(route: route, status: status)
        if let counter = requests[key] {
            counter.increment()
        } else {
            let counter = Counter(label: "counterpoint_http_requests_total",
                                  dimensions: [("route", route), ("status", String(status))])
            requests[key] = counter
            counter.increment()
        }
        let timer: Timer
        if let cached = durations[route] {
            timer = cached
        } else {
            timer = Timer(label: "counterpoint_http_request_duration_seconds", dimensions: [("route", route)],
                          preferredDisplayUnit: .seconds)
            durations[route] = timer
        }
        timer.record(duration: duration)
    }

    /// Counts a request the HTTP layer refused before it reached a route.
    static func recordRejected(status: Int) {
        Counter(label: "counterpoint_http_requests_total",
                dimensions: [("route", "unmatched"), ("status", String(status))]).increment()
    }
}
