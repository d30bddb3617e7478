import Foundation
import Programs
import Scratch
import Testing

extension EndToEnd {
    @Suite("the OpenAPI document and the routes the server answers")
    struct OpenAPIRoutes {
        /// The keys under `paths:` in docs/openapi.yaml: lines indented by exactly two spaces
        /// that end in a colon, up to the next top-level key.
        static func documentedPaths() throws -> [String] {
            let text = try String(contentsOf: Executable.packageRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
            var paths: [String] = []
            var inPaths = false
            for line in text.components(separatedBy: "\n") {
                if !line.hasPrefix(" ") && !line.isEmpty && !line.hasPrefix("#") {
                    inPaths = line.hasPrefix("paths:")
                    continue
                }
                guard inPaths, line.hasPrefix("  "), !line.hasPrefix("   ") else { continue }
                let key = line.dropFirst(2).trimmingCharacters(in: .whitespaces)
                guard key.hasSuffix(":") else { continue }
                var path = String(key.dropLast())
                if path.hasPrefix("\""), path.hasSuffix("\""), path.count >= 2 { path = String(path.dropFirst().dropLast()) }
                paths.append(path)
            }
            return paths
        }

        /// The templates of the route table in Sources/Reader/Route.swift: the string literal of
        /// every `Route("…")` in it, and every subject route (`Route(base + "/…"`) under
        /// `/v1/tracks/{id}` and `/v1/creators/{id}` — the waveform under the tracks only, a
        /// creator's tracks under the creators only.
        static func routeTemplates() throws -> [String] {
            let text = try String(contentsOf: Executable.packageRoot.appendingPathComponent("Sources/Reader/Route.swift"), encoding: .utf8)
            func literals(after marker: String) -> [String] {
                text.components(separatedBy: marker).dropFirst().compactMap { rest in
                    rest.split(separator: "\"", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
                }
            }
            let subjectRoutes = literals(after: "Route(base + \"").flatMap { suffix in
                (suffix == "/tracks" ? [] : ["/v1/tracks/{id}" + suffix]) + (suffix == "/waveform" ? [] : ["/v1/creators/{id}" + suffix])
            }
            let templates = literals(after: "Route(\"") + subjectRoutes
            guard !templates.isEmpty else { throw CommandError(description: "no `Route(\"…\")` in Route.swift") }
            return templates
        }

        @Test("docs/openapi.yaml lists exactly the route templates of Sources/Reader/Route.swift")
        func documentedPathsEqualRouteTemplates() throws {
            let documented = try Self.documentedPaths()
            let templates = try Self.routeTemplates()
            #expect(documented.count == 22, "\(documented)")
            #expect(Set(documented).count == documented.count, "no path documented twice")
            #expect(Set(documented) == Set(templates))
            #expect(templates.count == Set(templates).count)
        }

        @Test("every documented path answers, and undocumented paths are 404 not_found")
        func documentedPathsAnswerAndOthersAreNotFound() async throws {
            let documented = try Self.documentedPaths()
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                try await Steps.generate(into: logs, scratch: scratch, events: 1_000, tracks: 20, seed: 61)
                try await Steps.batch(logs: logs, data: data, scratch: scratch)
                try await withServer(dataDirectory: data, scratch: scratch) { server in
                    for path in documented {
                        var target = path.replacingOccurrences(of: "{id}", with: "1")
                        if path == "/v1/plays" { target += "?track_id=1" }
                        if path.hasSuffix("/{id}/breakdown") { target += "?by=country" }
                        let response = try server.request(target)
                        #expect(response.status != 404, "documented \(path) → 404")
                        #expect(response.status == 200, "documented \(path) → \(response.status) \(response.text.prefix(200))")
                        #expect(response.contentType != nil, "documented \(path) has a Content-Type")
                    }

                    // The document's patterns admit exactly what the server accepts (the calendar
                    // itself, such as 30 February, is left to the server).
                    let text = try String(contentsOf: Executable.packageRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
                    let timePattern = try Regex(String(try #require(text.firstMatch(of: /name: from[\s\S]*?pattern: '([^']+)'/)?.output.1)))
                    let idsPattern = try Regex(String(try #require(text.firstMatch(of: /name: track_id[\s\S]*?pattern: '([^']+)'/)?.output.1)))
                    for time in ["2026-11-20T10:00:00Z", "2026-11-20t10:00:00z", "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00+00:00",
                                 "2003-09-03T19:43:01.0+07:59", "2026-11-20T10:00:00-00:00", "2026-11-20T10:00:00", "2026-11-20",
                                 "2026-11-20T10:00Z", ""] {
                        let query = time.replacingOccurrences(of: "+", with: "%2B")
                        let status = try server.request("/v1/top?from=\(query)").status
                        #expect((status == 200) == (time.wholeMatch(of: timePattern) != nil), "from=\(time) → \(status)")
                    }
                    for ids in ["1", "1,2,3", "", ",", "1,", ",1", "1,,2", "a"] {
                        let status = try server.request("/v1/plays?track_id=\(ids)").status
                        #expect((status == 200) == (ids.wholeMatch(of: idsPattern) != nil), "track_id=\(ids) → \(status)")
                    }

                    let undocumented = [
                        "/v1", "/v1/", "/v1/tracks", "/v1/tracks/1", "/v1/tracks/1/", "/v1/tracks/1/plays/",
                        "/v1/tracks/1/plays/extra", "/v1/tracks/1/timelines", "/v1/tracks/1/likes", "/v1/top/",
                        "/v1/plays/1", "/v2/top", "/V1/TOP", "//v1/top", "/v1//top", "/healthz/", "/health",
                        "/ready", "/metrics.json", "/index.html", "/favicon.ico", "/v1/status/", "/openapi.yaml",
                        "/v1/tracks/1/plays.json", "/v1/track/1/plays",
                    ]
                    for path in undocumented {
                        let response = try server.request(path)
                        #expect(response.status == 404, "undocumented \(path) → \(response.status)")
                        #expect(response.contentType?.hasPrefix("application/json") == true, "\(path)")
                        #expect(response.errorCode == "not_found", "\(path): \(response.text.prefix(200))")
                    }
                }
            }
        }
    }
}
