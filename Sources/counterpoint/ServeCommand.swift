import ArgumentParser
import CounterStore
import CounterpointApp
import Foundation
import HTTPServer
import Logging
import Reader

/// `--listen HOST:PORT` (IPv6 hosts in brackets: `[::1]:8080`).
struct ListenAddress: ExpressibleByArgument, CustomStringConvertible {
    var host: String
    var port: Int

    init?(argument: String) {
        guard let colon = argument.lastIndex(of: ":"), let port = Int(argument[argument.index(after: colon)...]),
              (0...65_535).contains(port) else { return nil }
        var host = String(argument[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.host = host
        self.port = port
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

struct ReaderOptions: ParsableArguments {
    @Option(help: "Address the HTTP reader listens on, HOST:PORT; port 0 picks a free one (env COUNTERPOINT_LISTEN).")
    var listen: ListenAddress = ListenAddress(argument: Environment.string("listen", default: "127.0.0.1:8080"))
        ?? ListenAddress(argument: "127.0.0.1:8080")!

    @Option(help: "HTTP worker threads, each with its own store connections (env COUNTERPOINT_HTTP_THREADS).")
    var httpThreads: Int = Environment.integer("http-threads", default: HTTPServerConfiguration().threadCount)

    @Option(help: """
        How long a reader thread may answer from the same store snapshots, in milliseconds; 0 takes a \
        fresh snapshot for every query (env COUNTERPOINT_SNAPSHOT_AGE_MS).
        """)
    var snapshotAgeMs: Int = Environment.integer("snapshot-age-ms", default: 20)

    @Option(help: ArgumentHelp("Answer HTTPS only (TLS 1.2+) with this PEM certificate (chain); needs --tls-key (env COUNTERPOINT_TLS_CERT).",
                               valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The PEM private key of --tls-cert (env COUNTERPOINT_TLS_KEY).", valueName: "file"))
    var tlsKey: String?

    @Option(help: ArgumentHelp("""
        Require HTTP Basic credentials from this Apache password file (bcrypt, as htpasswd -B writes it) \
        on every route but /healthz and /readyz (env COUNTERPOINT_HTPASSWD).
        """, valueName: "file"))
    var htpasswd: String?

    func validate() throws {
        guard (tlsFiles.certificate == nil) == (tlsFiles.key == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        guard (0...10_000).contains(snapshotAgeMs) else { throw ValidationError("--snapshot-age-ms must be between 0 and 10000") }
        guard httpThreads >= 1, httpThreads <= 256 else { throw ValidationError("--http-threads must be between 1 and 256") }
    }

    func readerConfiguration(store: StoreBackend, metricsExposition: @escaping @Sendable () -> String) -> ReaderConfiguration {
        var configuration = ReaderConfiguration(store: store, server: serverConfiguration(),
                                                metricsExposition: metricsExposition)
        configuration.snapshotAge = .milliseconds(snapshotAgeMs)
        if let certificate = tlsFiles.certificate, let key = tlsFiles.key {
            configuration.tls = TLSFiles(certificateFile: certificate, keyFile: key)
        }
        configuration.passwordFile = htpasswd ?? Environment.optionalString("htpasswd")
        return configuration
    }

    /// The flags, or else their environment variables.
    private var tlsFiles: (certificate: String?, key: String?) {
        (tlsCert ?? Environment.optionalString("tls-cert"), tlsKey ?? Environment.optionalString("tls-key"))
    }

    func serverConfiguration() -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.host = listen.host
        configuration.port = listen.port
        configuration.threadCount = httpThreads
        return configuration
    }
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Answer dashboards over HTTP: merged counts, timelines and rankings of tracks and creators, status and metrics.",
        discussion: """
        For every hour the batch layer has covered the answer is the batch count; for every other \
        hour, the realtime count. See docs/openapi.yaml for the API. Stops cleanly on SIGINT/SIGTERM.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var reader: ReaderOptions

    func run() async throws {
        let logger = Bootstrap.logging(level: common.logLevel)
        let exposition = Bootstrap.metrics()
        let application: Application
        do {
            let configuration = reader.readerConfiguration(store: try storeOptions.backend(dataDirectory: common.dataDirectory),
                                                           metricsExposition: exposition)
            let (host, tls) = (reader.listen.host, configuration.tls != nil)
            application = try await buildServe(configuration, logger: logger) { port in announceReader(host: host, port: port, tls: tls) }
        } catch {
            throw CommandFailure("serve: cannot start the reader on \(reader.listen): \(error)")
        }
        try await application.runUntilSignalled()
    }
}

/// Prints where the reader answers, on stdout, as the first line scripts and tests wait for.
func announceReader(host: String, port: Int, tls: Bool) {
    print("counterpoint: reader listening on \(readerURL(host: host, port: port, tls: tls))")
    fflush(nil)
}

/// The reader's base URL, e.g. `https://[::1]:8443/`.
func readerURL(host: String, port: Int, tls: Bool) -> String {
    let shownHost = host.contains(":") ? "[\(host)]" : host
    return "\(tls ? "https" : "http")://\(shownHost):\(port)/"
}

