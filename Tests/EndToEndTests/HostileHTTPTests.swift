import Foundation
import HTTPTestClient
import Scratch
import Testing

extension EndToEnd {
    @Suite("hostile HTTP requests")
    struct HostileHTTP {
        /// One request the reader must refuse with a documented JSON error.
        struct Case: CustomStringConvertible {
            var method = "GET"
            var target: String
            var headers: [String] = []
            var status: Int
            var code: String
            var description: String { "\(method) \(target.prefix(120))\(target.count > 120 ? "…" : "")" }
        }

        static let day = "from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z"

        static let badTrackIDs = [
            "abc", "-1", "0", "00", "9007199254740992", "99999999999999999999999", "1e3", "0x10", "1.0", "+1",
            "%201", "1%20", "%EF%BC%91",  // a full-width digit one
        ]

        static var cases: [Case] {
            var cases: [Case] = []
            for id in badTrackIDs {
                cases.append(Case(target: "/v1/tracks/\(id)/plays", status: 400, code: "invalid_track_id"))
                cases.append(Case(target: "/v1/tracks/\(id)/timeline?\(day)", status: 400, code: "invalid_track_id"))
                cases.append(Case(target: "/v1/plays?track_id=1,\(id)", status: 400, code: "invalid_track_id"))
            }
            cases += [
                Case(target: "/v1/tracks//plays", status: 400, code: "invalid_track_id"),
                Case(target: "/v1/plays?track_id=", status: 400, code: "missing_track_id"),
                Case(target: "/v1/plays", status: 400, code: "missing_track_id"),
                Case(target: "/v1/plays?track_id=1,,2", status: 400, code: "invalid_track_id"),
                Case(target: "/v1/plays?track_id=1,2,", status: 400, code: "invalid_track_id"),
                Case(target: "/v1/plays?track_id=" + (1...1001).map(String.init).joined(separator: ","),
                     status: 400, code: "too_many_track_ids"),
            ]
            for time in ["2026-02-30T00:00:00Z", "2026-11-20T25:00:00Z", "yesterday", "2026-11-20T10:00:00%2B01:00",
                         "2026-11-20T10:00:00+01:00", "2026-13-01T00:00:00Z", "2026-11-20", ""] {
                cases.append(Case(target: "/v1/tracks/1/plays?from=\(time)", status: 400, code: "invalid_time"))
                cases.append(Case(target: "/v1/top?to=\(time)", status: 400, code: "invalid_time"))
                cases.append(Case(target: "/v1/tracks/1/timeline?from=\(time)&to=2026-11-21T00:00:00Z", status: 400, code: "invalid_time"))
            }
            for (route, query) in [("/v1/tracks/1/plays", ""), ("/v1/top", ""), ("/v1/plays", "track_id=1&"),
                                   ("/v1/tracks/1/timeline", "")] {
                cases.append(Case(target: "\(route)?\(query)from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z",
                                  status: 400, code: "invalid_range"))
                cases.append(Case(target: "\(route)?\(query)form=2026-11-20T00:00:00Z", status: 400, code: "unknown_parameter"))
                cases.append(Case(target: "\(route)?\(query)from=2026-11-20T00:00:00Z&from=2026-11-20T01:00:00Z",
                                  status: 400, code: "duplicate_parameter"))
            }
            cases += [
                Case(target: "/v1/plays?track_id=1&track_id=2", status: 400, code: "duplicate_parameter"),
                Case(target: "/v1/top?limit=3&limit=3", status: 400, code: "duplicate_parameter"),
                Case(target: "/healthz?verbose=1", status: 400, code: "unknown_parameter"),
                Case(target: "/v1/status?x", status: 400, code: "unknown_parameter"),
                Case(target: "/v1/tracks/1/timeline?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z",
                     status: 400, code: "range_too_large"),
                Case(target: "/v1/tracks/1/timeline?from=2026-01-01T00:00:00Z&to=2027-02-21T17:00:00Z",
                     status: 400, code: "range_too_large"),   // 10,001 hours
                Case(target: "/v1/tracks/1/timeline?step=day&from=1990-01-01T00:00:00Z&to=2099-01-01T00:00:00Z",
                     status: 400, code: "range_too_large"),
                Case(target: "/v1/tracks/1/timeline?step=week&\(day)", status: 400, code: "invalid_step"),
                Case(target: "/v1/tracks/1/timeline?step=&\(day)", status: 400, code: "invalid_step"),
                Case(target: "/v1/tracks/1/timeline?step=HOUR&\(day)", status: 400, code: "invalid_step"),
            ]
            for limit in ["0", "1001", "-1", "abc", "", "1.5", "%2B5", "99999999999999999999999"] {
                cases.append(Case(target: "/v1/top?limit=\(limit)", status: 400, code: "invalid_limit"))
            }
            // Percent-encoding tricks: decoded once, strictly.
            cases += [
                Case(target: "/v1/tracks/%00/plays", status: 400, code: "invalid_request_target"),
                Case(target: "/v1/top?limit=1%00", status: 400, code: "invalid_request_target"),
                Case(target: "/v1/tracks/%zz/plays", status: 400, code: "invalid_request_target"),
                Case(target: "/v1/top?limit=%", status: 400, code: "invalid_request_target"),
                Case(target: "/v1/tracks/%C0%AF/plays", status: 400, code: "invalid_request_target"),
                Case(target: "/v1/tracks/%FF/plays", status: 400, code: "invalid_request_target"),
                Case(target: "/v1/tracks/%2531/plays", status: 400, code: "invalid_track_id"),
                Case(target: "/v1/tracks/%2e%2e%2fplays", status: 400, code: "invalid_track_id"),
                Case(target: "/v1/tracks/1/%2e%2e/%2e%2e/status", status: 404, code: "not_found"),
                Case(target: "/v1/%2e%2e%2fv1/top", status: 404, code: "not_found"),
                Case(target: "/v1/tracks/1%2F2/plays", status: 404, code: "not_found"),
                Case(target: "/v1/tracks/%2F/plays", status: 404, code: "not_found"),
                Case(target: "/v1/tracks/1/plays%2F", status: 404, code: "not_found"),
                Case(target: "*", status: 400, code: "invalid_request_target"),
            ]
            // Sizes.
            cases += [
                Case(target: "/v1/tracks/1/plays?from=" + String(repeating: "a", count: 10_000), status: 414, code: "uri_too_long"),
                Case(target: "/" + String(repeating: "x", count: 10_000), status: 414, code: "uri_too_long"),
                Case(target: "/v1/top", headers: ["X-Padding: " + String(repeating: "p", count: 20_000)],
                     status: 431, code: "headers_too_large"),
                Case(target: "/v1/top", headers: (1...200).map { "X-Field-\($0): \($0)" }, status: 431, code: "headers_too_large"),
            ]
            // Methods other than GET and HEAD, on routes that exist.
            for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"] {
                cases.append(Case(method: method, target: "/v1/top", headers: ["Content-Length: 0"], status: 405, code: "method_not_allowed"))
                cases.append(Case(method: method, target: "/v1/tracks/1/plays", headers: ["Content-Length: 0"],
                                  status: 405, code: "method_not_allowed"))
            }
            cases.append(Case(method: "POST", target: "/healthz", headers: ["Content-Length: 0"], status: 405, code: "method_not_allowed"))
            return cases
        }

        /// The healthz probe every hostile request is followed by.
        func expectHealthy(_ server: Server, after what: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let response = try? server.request("/healthz")
            #expect(response?.status == 200, "/healthz after \(what)", sourceLocation: sourceLocation)
        }

        @Test("every hostile request gets its documented JSON error, and the server keeps answering")
        func hostileRequestsGetJSONErrors() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                try await Steps.generate(into: logs, scratch: scratch, events: 3_000, tracks: 50, seed: 51)
                try await Steps.batch(logs: logs, data: data, scratch: scratch)
                let truth = try LogTruth(logs: logs)

                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    for hostile in Self.cases {
                        let response: HTTPResponse
                        do {
                            response = try server.client.request(hostile.target, method: hostile.method, headers: hostile.headers)
                        } catch {
                            Issue.record("\(hostile): \(error)")
                            continue
                        }
                        #expect(response.status == hostile.status, "\(hostile): \(response.text.prefix(300))")
                        #expect(response.contentType?.hasPrefix("application/json") == true, "\(hostile)")
                        #expect(response.errorCode == hostile.code, "\(hostile): \(response.text.prefix(300))")
                        #expect(!(response.errorMessage ?? "").isEmpty, "\(hostile)")
                        if hostile.status == 405 {
                            #expect(response.header("Allow") == "GET, HEAD", "\(hostile)")
                        }
                        expectHealthy(server, after: hostile.description)
                    }

                    // Limits are inclusive: these are answered.
                    let thousand = try server.request("/v1/plays?track_id=" + (1...1000).map(String.init).joined(separator: ","))
                    #expect(thousand.status == 200)
                    #expect((thousand.jsonObject?["tracks"] as? [Any])?.count == 1000)
                    let longest = try server.request("/v1/tracks/1/timeline?from=2026-01-01T00:00:00Z&to=2027-02-21T16:00:00Z")
                    #expect(longest.status == 200)
                    #expect((longest.jsonObject?["points"] as? [Any])?.count == 10_000)
                    #expect(try server.request("/v1/top?limit=1000").status == 200)
                    #expect(try server.request("/v1/top?limit=1").status == 200)
                    #expect(try server.request("/v1/tracks/9007199254740991/plays").status == 200)
                    #expect(try server.request("/v1/tracks/1/plays?from=2026-11-20T10:00:00%2B00:00").status == 200)

                    // HEAD answers like GET, without a body.
                    for target in ["/v1/top", "/healthz", "/v1/tracks/1/plays", "/v1/tracks/abc/plays"] {
                        let head = try server.request(target, method: "HEAD")
                        let get = try server.request(target)
                        #expect(head.status == get.status, "HEAD \(target)")
                        #expect(head.body.isEmpty, "HEAD \(target) has no body")
                        #expect(head.contentType == get.contentType, "HEAD \(target)")
                    }

                    try rawSocketAbuse(server)

                    // After all of it, the answers are still right.
                    let health = try server.request("/healthz")
                    #expect(health.status == 200)
                    let ready = try server.request("/readyz")
                    #expect(ready.status == 200)
                    let total = try server.json("/v1/tracks/1/plays")
                    #expect(int(total["plays"]) == truth.plays(of: 1))
                }
            }
        }

        /// Bytes that are not an HTTP request, and requests that stop half way. libmicrohttpd
        /// itself answers what it cannot parse (400/505 or just closing), before the reader's
        /// JSON errors can; what matters is a 4xx or a closed connection, never a crash or a hang.
        func rawSocketAbuse(_ server: Server) throws {
            var random = SystemRandomNumberGenerator()
            let garbage: [[UInt8]] = [
                [0x00, 0xFF, 0xFE] + Array(" garbage \u{1}\u{2}\r\n\r\n".utf8),
                Array("HELLO\r\n\r\n".utf8),
                Array("hello world this is not http\r\n\r\n".utf8),
                Array("GET /v1/top\r\n\r\n".utf8),
                Array("GET /v1/top HTTP/9.9\r\nHost: x\r\n\r\n".utf8),
                Array("GET /v1/top HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n\r\n".utf8),
                Array("GET /v1/top HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".utf8),
                Array("GET /v1/top HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8),
                (0..<4_096).map { _ in UInt8.random(in: 0...255, using: &random) },
                Array("\r\n\r\n\r\n".utf8),
            ]
            for bytes in garbage {
                let what = "garbage \(String(decoding: bytes.prefix(40), as: UTF8.self).debugDescription)"
                let response = try server.client.exchange(bytes, closeWriteSide: true)
                if let response {
                    #expect((400..<500).contains(response.status) || response.status == 505, "\(what) → \(response.status)")
                }
                expectHealthy(server, after: what)
            }

            // Half-sent requests: the client stops mid-headers, then closes, or just waits.
            let halves = ["GET /v1/top HTTP/1.1\r\nHost: x\r\n", "GET /v1/tracks/1/pla", "G", "GET /v1/top HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc"]
            for half in halves {
                let response = try server.client.exchange(Array(half.utf8), closeWriteSide: true)
                if let response {
                    #expect((400..<500).contains(response.status), "half-sent \(half.debugDescription) → \(response.status)")
                }
                expectHealthy(server, after: "half-sent \(half.debugDescription)")
            }
            var stalled: [TestClient] = []
            for half in halves {
                let connection = try server.client.open()
                try connection.send(Array(half.utf8))
                stalled.append(connection)
            }
            expectHealthy(server, after: "\(stalled.count) stalled connections held open")
            stalled.removeAll()
            expectHealthy(server, after: "stalled connections closed")
        }
    }
}
