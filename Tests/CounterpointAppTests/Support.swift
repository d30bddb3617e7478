import CounterpointApp
import Foundation
import HTTPTestClient
import Logging
import ServiceLifecycle

/// Quiet: librdkafka's connection chatter would drown test output.
let quietLogger = Logger(label: "app-tests") { _ in SwiftLogNoOpLogHandler() }

/// Runs `applications` as one `ServiceGroup` while `body` runs, then shuts the group down
/// gracefully and waits until every component has stopped; rethrows a failure of either.
func whileRunning<T: Sendable>(_ applications: [Application], _ body: () async throws -> T) async throws -> T {
    let group = ServiceGroup(services: applications, logger: quietLogger)
    let running = Task { try await group.run() }
    let outcome: Result<T, any Error>
    do {
        outcome = .success(try await body())
    } catch {
        outcome = .failure(error)
    }
    await group.triggerGracefulShutdown()
    try await running.value
    return try outcome.get()
}

/// `GET target` on the reader at `port`, decoded as a JSON object.
func getJSON(_ target: String, port: Int) throws -> (status: Int, object: [String: Any]) {
    let response = try TestClient(port: port).request(target)
    let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    return (response.status, object)
}

/// The merged plays the reader answers for a track, or nil if it does not answer 200.
func plays(of track: Int64, port: Int) throws -> Int64? {
    let answer = try getJSON("/v1/tracks/\(track)/plays", port: port)
    guard answer.status == 200 else { return nil }
    return (answer.object["plays"] as? NSNumber)?.int64Value
}

/// A valid play event, written out here rather than by the project's generator.
func playEvent(id: String, track: Int64, at epochSeconds: Int64) -> [UInt8] {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    let time = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(epochSeconds)))
    return Array(#"{"event_id":"\#(id)","type":"play","track_id":\#(track),"occurred_at":"\#(time)"}"#.utf8)
}
