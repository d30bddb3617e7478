import CounterpointCore
import HTTPServer

/// One route of the reader: its template, the matcher derived from it, and its handler.
///
/// The template is the route as docs/openapi.yaml documents it (a test keeps the table and the
/// document equal) and the `route` label of metrics and logs, so that per-subject paths do not
/// explode metric cardinality. A segment `{id}` matches the id of the subject kind the path
/// names (`/v1/tracks/{id}/…`, `/v1/creators/{id}/…`); every other segment matches itself.
struct Route: Sendable {
    /// Answers a request the route matched: the reader's answers, the request, the path's
    /// subject (a track of id 0 when the template has no `{id}`), and the worker's store connections.
    typealias Handler = @Sendable (_ reader: ReaderRoutes, _ request: HTTPRequest, _ subject: Subject, _ store: StoreSlot) throws -> HTTPResponse

    let template: String
    let handler: Handler
    /// The kind of subject `{id}` names.
    private let kind: SubjectKind
    private let segments: [Segment]

    private enum Segment: Sendable {
        case literal([UInt8])
        case id
    }

    init(_ template: String, kind: SubjectKind = .track, handler: @escaping Handler) {
        self.template = template
        self.kind = kind
        self.handler = handler
        segments = template.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
            .map { $0.elementsEqual("{id}".utf8) ? .id : .literal(Array($0)) }
    }

    /// The routes of one subject's answers, the same for every kind (`/v1/tracks/{id}/…`,
    /// `/v1/creators/{id}/…`) but the waveform, which is a track's, and a creator's tracks.
    static func subjectRoutes(_ kind: SubjectKind) -> [Route] {
        let base = "/v1/\(kind.plural)/{id}"
        var routes = [
            Route(base + "/plays", kind: kind) { reader, request, subject, store in
                try reader.counts.plays(subject, request.query, store: store, round: request.round, receivedAt: request.receivedAt)
                    .map(HTTPResponse.json) ?? .later
            },
            Route(base + "/counts", kind: kind) { reader, request, subject, store in
                try reader.counts.counts(subject, request.query, accept: request.header("Accept"), store: store)
            },
            Route(base + "/timeline", kind: kind) { reader, request, subject, store in
                try reader.counts.timeline(subject, request.query, accept: request.header("Accept"), store: store)
            },
            Route(base + "/breakdown", kind: kind) { reader, request, subject, store in
                try reader.dimensions.breakdown(subject, request.query, accept: request.header("Accept"), store: store)
            },
            Route(base + "/listeners", kind: kind) { reader, request, subject, store in
                .json(try reader.listeners.total(subject, request.query, store: store))
            },
            Route(base + "/listeners/timeline", kind: kind) { reader, request, subject, store in
                try reader.listeners.timeline(subject, request.query, accept: request.header("Accept"), store: store)
            },
        ]
        switch kind {
        case .track:
            routes.insert(Route(base + "/waveform", kind: kind) { reader, request, subject, store in
                .json(try reader.dimensions.waveform(subject, request.query, store: store))
            }, at: 3)
        case .creator:
            routes.append(Route(base + "/tracks", kind: kind) { reader, request, subject, store in
                try reader.counts.creatorTracks(subject, request.query, accept: request.header("Accept"), store: store)
            })
        }
        return routes
    }

    /// Every route the reader answers.
    static let table: [Route] = SubjectKind.allCases.flatMap(subjectRoutes) + [
        Route("/v1/plays") { reader, request, _, store in
            try reader.counts.multiPlays(request.query, accept: request.header("Accept"), store: store)
        },
        Route("/v1/top") { reader, request, _, store in
            try reader.counts.top(.track, request.query, accept: request.header("Accept"), store: store)
        },
        Route("/v1/creators/top") { reader, request, _, store in
            try reader.counts.top(.creator, request.query, accept: request.header("Accept"), store: store)
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

    /// The route a percent-decoded path asks for, with its subject. A path that names no route
    /// is `not_found`. A path whose only fault is its `{id}` is `invalid_track_id` (or
    /// `invalid_creator_id`) and still names its route, so that a typo in an id is told apart
    /// from a typo in the route and `/v1/tracks/0/plays` is counted under its route.
    static func match(_ path: String) -> (route: Route, subject: Result<Subject, APIError>)? {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        for route in table {
            var id: Int64? = 0
            guard route.matches(bytes, id: &id) else { continue }
            guard let id else { return (route, .failure(.invalidID(route.kind))) }
            return (route, .success(Subject(route.kind, id)))
        }
        return nil
    }

    /// Whether `path`, which starts with `/`, has exactly this route's segments; an `{id}`
    /// segment sets `id` (nil when it is not a valid id). Walks the bytes in place: a
    /// lookup allocates nothing here.
    private func matches(_ path: String.UTF8View, id trackID: inout Int64?) -> Bool {
        var start = path.index(after: path.startIndex)
        for (position, segment) in segments.enumerated() {
            let end = path[start...].firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
            let part = path[start..<end]
            switch segment {
            case .literal(let literal):
                guard part.elementsEqual(literal) else { return false }
            case .id:
                trackID = QueryValues.trackID(part)
            }
            if position == segments.count - 1 { return end == path.endIndex }
            guard end != path.endIndex else { return false }
            start = path.index(after: end)
        }
        return false
    }
}
