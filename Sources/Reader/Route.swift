/// The routes the reader answers. `label` is the route template used in metrics and logs,
/// so that per-track paths do not explode metric cardinality.
enum Route: Equatable {
    case trackPlays(trackID: Int64)
    case trackTimeline(trackID: Int64)
    case trackWaveform(trackID: Int64)
    case trackBreakdown(trackID: Int64)
    case plays
    case top
    case status
    case health
    case ready
    case metrics
    case dashboard

    /// Every route template, as documented in `docs/openapi.yaml` (a test keeps them equal).
    static let templates = [
        "/v1/tracks/{id}/plays", "/v1/tracks/{id}/timeline", "/v1/tracks/{id}/waveform", "/v1/tracks/{id}/breakdown", "/v1/plays", "/v1/top", "/v1/status",
        "/healthz", "/readyz", "/metrics", "/",
    ]

    var label: String {
        switch self {
        case .trackPlays: "/v1/tracks/{id}/plays"
        case .trackTimeline: "/v1/tracks/{id}/timeline"
        case .trackWaveform: "/v1/tracks/{id}/waveform"
        case .trackBreakdown: "/v1/tracks/{id}/breakdown"
        case .plays: "/v1/plays"
        case .top: "/v1/top"
        case .status: "/v1/status"
        case .health: "/healthz"
        case .ready: "/readyz"
        case .metrics: "/metrics"
        case .dashboard: "/"
        }
    }

    /// Whether a configured password file guards this route: all but the probes, which
    /// orchestrators call without credentials and which reveal nothing.
    var needsCredentials: Bool {
        self != .health && self != .ready
    }

    /// The route template a path asks for, even when its track id is bad (so that
    /// `/v1/tracks/0/plays` is counted under its route); "unmatched" for no route.
    static func label(forPath path: String) -> String {
        if path.hasPrefix("/v1/tracks/") {
            if path.hasSuffix("/plays") { return Route.trackPlays(trackID: 1).label }
            if path.hasSuffix("/timeline") { return Route.trackTimeline(trackID: 1).label }
            if path.hasSuffix("/waveform") { return Route.trackWaveform(trackID: 1).label }
            if path.hasSuffix("/breakdown") { return Route.trackBreakdown(trackID: 1).label }
        }
        return "unmatched"
    }

    /// Matches a percent-decoded path. A path that names no route is `not_found`; a track
    /// route with a bad id is `invalid_track_id`, so a typo in an id is told apart from a
    /// typo in the route.
    static func match(_ path: String) throws(APIError) -> Route {
        switch path {
        case "/v1/plays": return .plays
        case "/v1/top": return .top
        case "/v1/status": return .status
        case "/healthz": return .health
        case "/readyz": return .ready
        case "/metrics": return .metrics
        case "/": return .dashboard
        default: break
        }
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty,
              parts[1].elementsEqual("v1".utf8), parts[2].elementsEqual("tracks".utf8) else {
            throw .notFound
        }
        let kinds: [(name: String, route: (Int64) -> Route)] = [
            ("plays", Route.trackPlays), ("timeline", Route.trackTimeline),
            ("waveform", Route.trackWaveform), ("breakdown", Route.trackBreakdown),
        ]
        guard let kind = kinds.first(where: { parts[4].elementsEqual($0.name.utf8) }) else { throw .notFound }
        guard let trackID = QueryValues.trackID(parts[3]) else { throw .invalidTrackID }
        return kind.route(trackID)
    }
}
