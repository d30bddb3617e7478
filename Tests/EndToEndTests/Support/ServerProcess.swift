import Foundation
import Programs
import Testing

/// A running `counterpoint serve` on a kernel-chosen port, and a client for it.
struct Server {
    let command: RunningProgram
    let port: Int
    var client: HTTPClient { HTTPClient(port: port) }

    /// GET (or another method) over a fresh connection.
    func request(_ target: String, method: String = "GET", headers: [String] = []) throws -> HTTPResponse {
        try client.request(target, method: method, headers: headers)
    }

    /// GET that must answer 200 with a JSON object.
    func json(_ target: String) throws -> [String: Any] {
        let response = try request(target)
        guard response.status == 200, let object = response.jsonObject else {
            throw CommandError(description: "GET \(target) → \(response.status) \(response.text.prefix(500))")
        }
        return object
    }

    /// Stops the server with `signal` and expects it to exit 0 within `timeout` (docs/runbook.md).
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(5),
              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        command.signal(signal)
        let result = try await command.waitForExit(timeout: timeout)
        #expect(result != nil, "serve did not exit within \(timeout) of signal \(signal)", sourceLocation: sourceLocation)
        if let result {
            #expect(result.exited && result.status == 0, "serve stopped badly:\n\(result.summary)", sourceLocation: sourceLocation)
        }
        await command.killIfRunning()
    }

    /// Starts `serve --listen 127.0.0.1:0` (or `listen`) and reads its address from the first stdout
    /// line, `counterpoint: reader listening on http://127.0.0.1:PORT/` (`https://` with TLS).
    static func start(dataDirectory: URL, scratch: URL, extraArguments: [String] = [],
                      listen: String = "127.0.0.1:0") async throws -> Server {
        let command = try Executable.start(
            ["serve", "--data-dir", dataDirectory.path, "--listen", listen] + extraArguments, scratch: scratch)
        guard let line = try await command.firstStdoutLine(timeout: .seconds(30)) else {
            await command.killIfRunning()
            throw CommandError(description: "serve printed no address; stderr: \(command.stderr.prefix(2_000))")
        }
        let host = String(listen[..<(listen.lastIndex(of: ":") ?? listen.endIndex)])
        let prefixes = ["http", "https"].map { "counterpoint: reader listening on \($0)://\(host):" }
        guard let prefix = prefixes.first(where: line.hasPrefix), line.hasSuffix("/"),
              let port = Int(line.dropFirst(prefix.count).dropLast()), port > 0 else {
            await command.killIfRunning()
            throw CommandError(description: "unexpected first line from serve: \(line)")
        }
        return Server(command: command, port: port)
    }
}

/// Runs `body` against a fresh `serve` over `dataDirectory`, then stops it with SIGTERM and
/// expects exit 0 within 5 s — also when `body` fails.
func withServer<T>(dataDirectory: URL, scratch: URL, _ body: (Server) async throws -> T) async throws -> T {
    let server = try await Server.start(dataDirectory: dataDirectory, scratch: scratch)
    let outcome: Result<T, any Error>
    do {
        outcome = .success(try await body(server))
    } catch {
        outcome = .failure(error)
    }
    try await server.stop()
    return try outcome.get()
}
