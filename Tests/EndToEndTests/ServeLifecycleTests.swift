import Foundation
import Scratch
import Testing

extension EndToEnd {
    @Suite("serve starts ready and stops cleanly")
    struct ServeLifecycle {
        /// Polls until `target` answers 200 (the server may still be opening its stores), and
        /// returns the last answer.
        func awaitAnswer(_ server: Server, _ target: String) async throws -> HTTPResponse? {
            var last: HTTPResponse?
            for _ in 0..<200 {
                last = try? server.request(target)
                if last?.status == 200 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            return last
        }

        @Test("serve over an empty data directory is ready shortly after start, and SIGTERM ends it with exit 0")
        func readyThenSIGTERM() async throws {
            try await withTemporaryDirectory { scratch in
                let data = scratch.appendingPathComponent("data")
                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    let ready = try await awaitAnswer(server, "/readyz")
                    #expect(ready?.status == 200)
                    #expect(ready?.contentType?.hasPrefix("application/json") == true)
                    #expect(try server.request("/healthz").status == 200)

                    // Nothing counted yet: zeros and nulls, not errors.
                    let plays = try server.json("/v1/tracks/1/plays")
                    #expect(int(plays["plays"]) == 0)
                    let freshness = plays["freshness"] as? [String: Any]
                    #expect(freshness?["batch_covered_until"] is NSNull)
                    let top = try server.json("/v1/top")
                    #expect((top["tracks"] as? [Any])?.isEmpty == true)
                    let metrics = try server.request("/metrics")
                    #expect(metrics.status == 200)
                    #expect(metrics.contentType?.hasPrefix("text/plain") == true)
                    let page = try server.request("/")
                    #expect(page.status == 200)
                    #expect(page.contentType?.hasPrefix("text/html") == true)
                }
            }
        }

        @Test("SIGINT ends serve with exit 0 too")
        func sigintStops() async throws {
            try await withTemporaryDirectory { scratch in
                let server = try await Server.start(dataDirectory: scratch.appendingPathComponent("data"), scratch: scratch)
                let ready = try await awaitAnswer(server, "/readyz")
                #expect(ready?.status == 200)
                try await server.stop(signal: SIGINT)
            }
        }

        @Test("SIGTERM ends serve with exit 0 within 5 s even while clients hold idle and half-sent connections")
        func sigtermWithOpenConnections() async throws {
            try await withTemporaryDirectory { scratch in
                let server = try await Server.start(dataDirectory: scratch.appendingPathComponent("data"), scratch: scratch)
                let ready = try await awaitAnswer(server, "/readyz")
                #expect(ready?.status == 200)
                let idle = try server.client.open()
                let halfSent = try server.client.open()
                try halfSent.send(Array("GET /v1/top HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
                let keptAlive = try server.client.open()
                try keptAlive.send(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                try await server.stop(signal: SIGTERM)
                withExtendedLifetime((idle, halfSent, keptAlive)) {}
            }
        }

        @Test("a second serve on a port already in use exits non-zero with one line on stderr")
        func portInUse() async throws {
            try await withTemporaryDirectory { scratch in
                let data = scratch.appendingPathComponent("data")
                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    let second = try await runCounterpoint(
                        ["serve", "--data-dir", data.path, "--listen", "127.0.0.1:\(server.port)"], scratch: scratch,
                        timeout: .seconds(30))
                    #expect(second.exited && second.status != 0, "\(second.summary)")
                    #expect(second.stderrMessages.count == 1, "\(second.summary)")
                    #expect(second.stderrMessages.first?.contains("\(server.port)") == true, "\(second.summary)")
                    #expect(try server.request("/healthz").status == 200)
                }
            }
        }
    }
}
