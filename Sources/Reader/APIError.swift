import CounterpointCore
import Runtime

/// An error answer of the v1 API: an HTTP status and a stable machine-readable code, plus
/// a message for the person reading it. Rendered as `{"error":{"code":…,"message":…}}`.
/// Only this module makes one (the memberwise initializer is internal).
public struct APIError: Error, Equatable, Sendable {
    public var status: Int
    public var code: String
    public var message: String
    /// The components that make the process not ready (`/readyz`), listed as `/v1/status`
    /// lists them, under `error.components`; none for any other error.
    var components: [ComponentReport] = []

    static func badRequest(_ code: String, _ message: String) -> APIError {
        APIError(status: 400, code: code, message: message)
    }

    static let notFound = APIError(status: 404, code: "not_found", message: "no such route; the API is described in docs/openapi.yaml")
    static let methodNotAllowed = APIError(status: 405, code: "method_not_allowed", message: "only GET and HEAD are supported")

    static func storeUnavailable(_ detail: String) -> APIError {
        APIError(status: 503, code: "store_unavailable", message: "the counter store cannot be read right now: \(detail)")
    }

    /// `invalid_track_id`, `invalid_creator_id`: a path's `{id}` that is not one.
    static func invalidID(_ kind: SubjectKind) -> APIError {
        .badRequest("invalid_\(kind.idField)", "\(kind) id must be an integer between 1 and 9007199254740991")
    }

    var body: [UInt8] {
        var json = JSONWriter(capacity: 64 + message.utf8.count)
        json.beginObject()
        json.key("error")
        json.beginObject()
        json.key("code"); json.value(code)
        json.key("message"); json.value(message)
        if !components.isEmpty {
            json.key("components")
            json.components(components)
        }
        json.endObject()
        json.endObject()
        return json.bytes
    }
}
