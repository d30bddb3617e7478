import HTTPServer

/// One route of the reader: its template, the matcher derived from it, and its handler.
///
/// The template is the route as docs/openapi.yaml documents it (a test keeps the table and the
/// document equal) and the `route` label of metrics and logs, so that per-track paths do not
/// explode metric cardinality. A segment `{id}` matches a track id; every other segment
/// matches itself.
struct Route: Sendable {
    /// Answers a request the route matched: the reader's answers, the request, the path's track
    /// id (0 when the template has no `{id}`), and the worker's store connections.
    typealias Handler = @Sendable (_ reader: ReaderRoutes, _ request: HTTPRequest, _ trackID: Int64, _ store: StoreSlot) throws -> HTTPResponse

    let template: String
    let handler: Handler
    private let segments: [Segment]

    private enum Segment: Sendable {
        case literal([UInt8])
        case trackID
    }

    init(_ template: String, handler: @escaping Handler) {
        self.template = template
        self.handler = handler
        segments = template.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
            .map { $0.elementsEqual("{id}".utf8) ? .trackID : .literal(Array($0)) }
    }

    /// Every route the reader answers.
    static let table: [Route] = [
        Route("/v1/tracks/{id}/plays") { reader, request, track, store in
            try reader.counts.trackPlays(track, request.query, store: store, round: request.round, receivedAt: request.receivedAt)
                .map(HTTPResponse.json) ?? .later
        },
        Route("/v1/tracks/{id}/counts") { reader, request, track, store in
            try reader.counts.trackCounts(track, request.query, accept: request.header("Accept"), store: store)
        },
        Route("/v1/tracks/{id}/timeline") { reader, request, track, store in
            try reader.counts.timeline(track, request.query, accept: request.header("Accept"), store: store)
        },
        Route("/v1/tracks/{id}/waveform") { reader, request, track, store in
            .json(try reader.dimensions.waveform(track, request.query, store: store))
        },
        Route("/v1/tracks/{id}/breakdown") { reader, request, track, store in
            try reader.dimensions.breakdown(track, request.query, accept: request.header("Accept"), store: store)
        },
        Route("/v1/tracks/{id}/listeners") { reader, request, track, store in
            .json(try reader.listeners.total(track, request.query, store: store))
        },
        Route("/v1/tracks/{id}/listeners/timeline") { reader, request, track, store in
            try reader.listeners.timeline(track, request.query, accept: request.header("Accept"), store: store)
        },
        Route("/v1/plays") { reader, request, _, store in
            try reader.counts.multiPlays(request.query, accept: request.header("Accept"), store: store)
        },
        Route("/v1/top") { reader, request, _, store in
            try reader.counts.top(request.query, accept: request.header("Accept"), store: store)
        },
        Route("/v1/status") { reader, request, _, store in try reader.status(request, store: store) },
        Route("/healthz") { _, request, _, _ in
            _ = try QueryValues(request.query, allowed: QueryValues.noParameters)
            return .json(Array(#"{"status":"ok"}"#.utf8))
        },
        Route("/readyz") { reader, request, _, store in try reader.readiness(request, store: store) },
        Route("/metrics") { reader, request, _, _ in try reader.metrics(request) },
        Route("/") { _, request, _, _ in DashboardPage.response(ifNoneMatch: request.header("If-None-Match")) },
    ]

    /// Whether a configured password file guards this route: all but the probes, which
    /// orchestrators call without credentials and which reveal nothing.
    var needsCredentials: Bool {
        template != "/healthz" && template != "/readyz"
    }

    /// The route a percent-decoded path asks for, with its track id. A path that names no route
    /// is `not_found`. A path whose only fault is its `{id}` is `invalid_track_id` and still
    /// names its route, so that a typo in an id is told apart from a typo in the route and
    /// `/v1/tracks/0/plays` is counted under its route.
    static func match(_ path: String) -> (route: Route, trackID: Result<Int64, APIError>)? {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        for route in table {
            var trackID: Int64? = 0
            guard route.matches(bytes, trackID: &trackID) else { continue }
            guard let trackID else { return (route, .failure(.invalidTrackID)) }
            return (route, .success(trackID))
        }
        return nil
    }

    /// Whether `path`, which starts with `/`, has exactly this route's segments; an `{id}`
    /// segment sets `trackID` (nil when it is not a valid id). Walks the bytes in place: a
    /// lookup allocates nothing here.
    private func matches(_ path: String.UTF8View, trackID: inout Int64?) -> Bool {
        var start = path.index(after: path.startIndex)
        for (position, segment) in segments.enumerated() {
            let end = path[start...].firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
            let part = path[start..<end]
            switch segment {
            case .literal(let literal):
                guard part.elementsEqual(literal) else { return false }
            case .trackID:
                trackID = QueryValues.trackID(part)
            }
            if position == segments.count - 1 { return end == path.endIndex }
            guard end != path.endIndex else { return false }
            start = path.index(after: end)
        }
        return false
    }
}
