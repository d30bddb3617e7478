import CounterpointCore
import CounterStore
import HTTPServer
import Runtime

/// Everything the reader needs; the executable fills it from flags and environment, the
/// tests from temp directories and port 0.
public struct ReaderConfiguration: Sendable {
    /// The stores the reader reads (SQLite files or PostgreSQL).
    public var store: StoreBackend
    /// Listen address, thread pool and request limits.
    public var server: HTTPServerConfiguration
    /// Renders the process's metrics as Prometheus text for `GET /metrics`; the executable
    /// passes its swift-metrics backend here (the reader only records through swift-metrics).
    public var metricsExposition: @Sendable () -> String
    /// What the live parts of the process (consumer, archiver) report for `/v1/status`: the
    /// consumer's rate, rejections, offset gaps and fenced flushes under `realtime`, the
    /// archiver's state under `archive`; `nil` when `serve` runs on its own (those are null).
    public var liveStatus: (@Sendable () -> LiveStatus?)?
    /// The states of the process's long-running components (consumer, archiver, scheduled
    /// batch, …): `/readyz` answers 503 unless all run, and `/v1/status` lists them under
    /// `components`. nil when the reader runs on its own (`serve`).
    public var health: ComponentHealth?
    /// "Now": timeline defaults end at its current hour.
    public var clock: WallClock
    /// How long a server thread may keep answering from the same store snapshots. Reusing
    /// them saves SQLite's read locking per query (about a third of a point lookup's cost);
    /// answers are then at most this much older than the stores. Zero: a fresh snapshot for
    /// every query. Default 20 ms — a tenth of the realtime layer's flush interval.
    public var snapshotAge: Duration = .milliseconds(20)
    /// Answer HTTPS only, with this certificate and key (read at start); nil, the default: plain HTTP.
    public var tls: TLSFiles?
    /// Require HTTP Basic credentials from this Apache password file (bcrypt hashes, as
    /// `htpasswd -B` writes them, read at start) on every route but `/healthz` and `/readyz`;
    /// nil, the default: anyone who can connect may read.
    public var passwordFile: String?
    /// Answer the point lookups that reach a server thread together, one statement for all
    /// that came in with data on the same turn of its event loop (`StoreSlot.plays`). Default:
    /// where the store's reads are round trips (PostgreSQL).
    public var coalescesLookups: Bool

    public init(store: StoreBackend,
                server: HTTPServerConfiguration = HTTPServerConfiguration(),
                metricsExposition: @escaping @Sendable () -> String = { "" },
                liveStatus: (@Sendable () -> LiveStatus?)? = nil,
                health: ComponentHealth? = nil,
                clock: WallClock = .system) {
        self.store = store
        self.server = server
        coalescesLookups = store.readsAreRoundTrips
        self.metricsExposition = metricsExposition
        self.liveStatus = liveStatus
        self.health = health
        self.clock = clock
    }
}

/// Status of the in-process consumer and archiver, shown by `/v1/status` beside what the
/// stores say: each component's own status, as it reports it. The reader knows neither
/// component; the process that runs them fills this in.
public struct LiveStatus: Sendable {
    public var realtime: RealtimeStatus
    /// The archiver's, when one runs in this process.
    public var archive: ArchiveStatus?

    public init(realtime: RealtimeStatus, archive: ArchiveStatus? = nil) {
        self.realtime = realtime
        self.archive = archive
    }
}
