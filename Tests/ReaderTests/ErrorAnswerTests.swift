import CounterpointCore
import CounterStore
import Foundation
import HTTPTestClient
import LogCapture
import Patience
import StoreTestSupport
import Testing

@Suite("Reader errors, probes and store failures", .onTestThreads)
struct ErrorAnswerTests {
    /// Checks the shape every error shares: status, JSON content type, `{"error":{"code","message"}}`.
    private func expectError(_ response: TestResponse, status: Int, code: String,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8", sourceLocation: sourceLocation)
        let object = try response.object()
        #expect(Set(object.keys) == ["error"], sourceLocation: sourceLocation)
        let error = try #require(object["error"] as? [String: Any], sourceLocation: sourceLocation)
        #expect(Set(error.keys) == ["code", "message"], sourceLocation: sourceLocation)
        #expect(error["code"] as? String == code, "\(response.text)", sourceLocation: sourceLocation)
        #expect(!((error["message"] as? String) ?? "").isEmpty, sourceLocation: sourceLocation)
    }

    @Test("bad path and query values are 400 with a code naming the fault", arguments: StoreKind.allCases)
    func badValuesAre400(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let cases: [(String, String)] = [
                ("/v1/tracks/0/plays", "invalid_track_id"),
                ("/v1/tracks/abc/plays", "invalid_track_id"),
                ("/v1/tracks/-5/timeline", "invalid_track_id"),
                ("/v1/tracks/9007199254740992/plays", "invalid_track_id"),
                ("/v1/tracks/99999999999999999999999/plays", "invalid_track_id"),
                ("/v1/tracks/1/plays?from=yesterday", "invalid_time"),
                ("/v1/tracks/1/plays?to=2026-13-01T00:00:00Z", "invalid_time"),
                ("/v1/tracks/1/plays?from=\(time(5))&to=\(time(4))", "invalid_range"),
                ("/v1/top?from=\(time(5))&to=\(time(4))", "invalid_range"),
                ("/v1/tracks/1/timeline?from=\(time(5))&to=\(time(4))", "invalid_range"),
                ("/v1/tracks/1/timeline?step=week", "invalid_step"),
                ("/v1/tracks/1/timeline?step=", "invalid_step"),
            ]
            for (target, code) in cases {
                try expectError(try reader.get(target), status: 400, code: code)
            }
        }
    }

    @Test("unknown and repeated query parameters are 400, so a typo never answers all-time counts", arguments: StoreKind.allCases)
    func unknownAndRepeatedParameters(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let unknown = ["/v1/tracks/1/plays?form=\(time(0))", "/v1/tracks/1/timeline?steps=day", "/v1/top?limt=3",
                           "/v1/plays?track_id=1&track=2", "/v1/status?verbose=1", "/healthz?x", "/readyz?x=1",
                           "/metrics?format=json"]
            for target in unknown {
                try expectError(try reader.get(target), status: 400, code: "unknown_parameter")
            }
            let repeated = ["/v1/tracks/1/plays?from=\(time(0))&from=\(time(1))", "/v1/top?limit=1&limit=1",
                            "/v1/plays?track_id=1&track_id=2", "/v1/tracks/1/timeline?step=day&step=day"]
            for target in repeated {
                try expectError(try reader.get(target), status: 400, code: "duplicate_parameter")
            }
        }
    }

    @Test("an unknown route is 404, a method other than GET/HEAD is 405 with Allow", arguments: StoreKind.allCases)
    func notFoundAndMethodNotAllowed(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            for target in ["/v2/top", "/v1/tracks/1", "/v1/tracks/1/plays/extra", "/v1/tracks/1/listens", "/v1/top/",
                           "/v1//top", "/index.html"] {
                try expectError(try reader.get(target), status: 404, code: "not_found")
            }
            for method in ["POST", "PUT", "DELETE", "PATCH"] {
                let response = try reader.get("/v1/tracks/1/plays", method: method)
                try expectError(response, status: 405, code: "method_not_allowed")
                #expect(response.header("Allow") == "GET, HEAD")
            }
            let head = try reader.get("/v1/tracks/1/plays", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.header("Content-Type") == "application/json; charset=utf-8")
        }
    }

    @Test("an over-long target is 414 and over-large headers are 431, as JSON, and the connection's server keeps going", arguments: StoreKind.allCases)
    func tooLongTargetAndHeaders(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            try expectError(try reader.get("/v1/top?limit=" + String(repeating: "9", count: 9_000)),
                            status: 414, code: "uri_too_long")
            let headers = (0..<20).map { "X-Filler-\($0): " + String(repeating: "h", count: 1_000) }
            try expectError(try reader.get("/v1/top", headers: headers), status: 431, code: "headers_too_large")
            try expectError(try reader.get("/v1/tracks/1/plays?from=%zz"), status: 400, code: "invalid_request_target")
            #expect(try reader.json("/v1/tracks/1/plays", as: TrackPlaysAnswer.self).plays == 143)
        }
    }

    @Test("/healthz and /readyz answer 200 while the stores are readable; / is an HTML page", arguments: StoreKind.allCases)
    func probesAndDashboard(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let health = try reader.get("/healthz")
            #expect(health.status == 200)
            #expect(try health.object()["status"] as? String == "ok")
            let ready = try reader.get("/readyz")
            #expect(ready.status == 200)
            #expect(try ready.object()["status"] as? String == "ready")
            let page = try reader.get("/")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.text.contains("<html"))
        }
    }

    @Test("a batch store overwritten with garbage after start answers 503 store_unavailable, logged once for many requests, and the server keeps answering")
    func corruptedStoreIs503() throws {
        // What SQLite does with a damaged file.
        let records = CapturingLogHandler.Records()
        try ReaderFixture.with(.sqlite, logger: CapturingLogHandler.logger("reader-tests", into: records)) { reader in
            // Connections that have been answered from the store: their threads hold open store connections.
            let clients = try (0..<8).map { _ in try reader.client() }
            for client in clients {
                #expect(try client.request("/v1/tracks/1/plays").status == 200)
            }
            let path = reader.location.batchPath
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            // Same size, overwritten in place: the readers' memory maps stay valid.
            try overwrite(path, with: Data(repeating: 0xA5, count: original.count))

            let failing = ContinuousClock.now
            for (index, client) in clients.enumerated() {
                let target = ["/v1/tracks/1/plays", "/v1/top", "/v1/plays?track_id=1", "/v1/tracks/1/timeline",
                              "/v1/status", "/readyz"][index % 6]
                try expectError(try client.request(target), status: 503, code: "store_unavailable")
                // Bad input is still told apart from store trouble, and liveness does not depend on the store.
                try expectError(try client.request("/v1/tracks/0/plays"), status: 400, code: "invalid_track_id")
                #expect(try client.request("/healthz").status == 200)
            }
            // Every one of those requests failed on the store; the log says so once every 10 s: once,
            // unless a loaded machine stretched these requests past 10 s.
            for _ in 0..<50 {
                try expectError(try clients[0].request("/v1/tracks/1/plays"), status: 503, code: "store_unavailable")
            }
            let windows = 1 + Int((ContinuousClock.now - failing).components.seconds / 10)
            let logged = records.messages(at: .warning).filter { $0 == "store read failed" }.count
            #expect(logged >= 1 && logged <= windows, "\(logged) lines in \(windows) windows of 10 s")

            // Once the file is whole again the same server answers from it, on old and new connections.
            try overwrite(path, with: original)
            for client in try clients + (0..<4).map({ _ in try reader.client() }) {
                #expect(try client.request("/v1/tracks/1/plays").decode(TrackPlaysAnswer.self).plays == 143)
            }
            #expect(try reader.get("/readyz").status == 200)
        }
    }

    @Test("a store unreadable before a server thread's first request: counts are 503, yet /healthz is 200 and bad input 400")
    func storeUnreadableBeforeFirstRequest() throws {
        // What SQLite does with a damaged file.
        try ReaderFixture.with(.sqlite) { reader in
            let path = reader.location.batchPath
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            try overwrite(path, with: Data(repeating: 0xA5, count: original.count))

            // No request has been answered yet, so every server thread meets the broken store first.
            for _ in 0..<4 {
                let client = try reader.client()
                try expectError(try client.request("/v1/tracks/1/plays"), status: 503, code: "store_unavailable")
                try expectError(try client.request("/readyz"), status: 503, code: "store_unavailable")
                #expect(try client.request("/healthz").status == 200, "liveness must not depend on the store")
                try expectError(try client.request("/v1/tracks/0/plays"), status: 400, code: "invalid_track_id")
            }

            try overwrite(path, with: original)
            #expect(try reader.json("/v1/tracks/1/plays", as: TrackPlaysAnswer.self).plays == 143)
        }
    }

    private func overwrite(_ path: String, with bytes: Data) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: bytes)
    }
}
