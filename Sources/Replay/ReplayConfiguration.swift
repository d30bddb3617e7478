/// How a `Replayer` produces: where to, how fast, and when to stop.
public struct ReplayConfiguration: Sendable {
    /// The topic every event goes to. Default "plays".
    public var topic = "plays"
    /// Target events per second; nil (the default) or 0 means as fast as the producer takes them.
    public var rate: Double?
    /// Start the logs again when they end (synthetic sources never end). Default false.
    public var loop = false
    /// Stop after this long; nil (the default) means no time limit.
    public var duration: Duration?
    /// Stop after this many events; nil (the default) means no limit.
    public var limit: Int?
    /// How long the final flush waits for outstanding delivery reports. Default 30 s.
    public var flushTimeout = Duration.seconds(30)
    /// The same wait when a stop ended the replay (SIGINT, SIGTERM, a dying parent): a stop
    /// asks to go soon, and with the broker gone the whole `flushTimeout` would be spent
    /// waiting. What is still outstanding then is reported as undelivered. Default 5 s.
    public var flushTimeoutAfterStop = Duration.seconds(5)
    /// How far the replayer may fall behind its schedule (when the producer applies
    /// backpressure) and still catch up; beyond it the schedule restarts from the current
    /// moment, so a long stall is never followed by a burst of more than this. Default 1 s.
    public var maximumBacklog = Duration.seconds(1)
    /// The shortest pause between two bursts when pacing: events due within it go together,
    /// so the clock is read and the thread sleeps at most about 1,000 times a second. Default 1 ms.
    public var burstInterval = Duration.milliseconds(1)
    /// How often `Replayer.run` reports progress. Default 200 ms.
    public var progressInterval = Duration.milliseconds(200)

    public init(topic: String = "plays") {
        self.topic = topic
    }

    /// How long the final flush waits: `flushTimeoutAfterStop` (never longer than `flushTimeout`)
    /// when a stop ended the replay, `flushTimeout` otherwise.
    func finalFlushTimeout(stopped: Bool) -> Duration {
        stopped ? min(flushTimeout, flushTimeoutAfterStop) : flushTimeout
    }

    /// The rate to pace to, nil when unpaced.
    var pacedRate: Double? {
        guard let rate, rate > 0 else { return nil }
        return rate
    }

    func validate() throws(ReplayError) {
        if let rate, !(rate >= 0 && rate.isFinite) {
            throw .invalidConfiguration("rate must be a finite number of events per second, 0 or more")
        }
        if let limit, limit < 0 { throw .invalidConfiguration("limit must be 0 or more") }
        if let duration, duration < .zero { throw .invalidConfiguration("duration must not be negative") }
        if topic.isEmpty { throw .invalidConfiguration("topic must not be empty") }
        if maximumBacklog <= .zero || burstInterval <= .zero || progressInterval <= .zero {
            throw .invalidConfiguration("backlog, burst and progress intervals must be positive")
        }
    }
}
