import Kafka

/// How a replay went: what was sent, how fast, and what the cluster made of it.
public struct ReplaySummary: Sendable {
    /// Why the replay ended.
    public enum StopReason: String, Sendable {
        /// The logs ended (without `loop`).
        case endOfLogs = "end_of_logs"
        /// `limit` events were sent.
        case limit
        /// `duration` passed.
        case duration
        /// `Replayer.stop` was called (SIGINT/SIGTERM for the command).
        case stopped
    }

    public var topic: String
    /// Events handed to the producer.
    public var events: Int
    /// Their value bytes.
    public var bytes: Int
    /// Lines that are not valid events, produced without a key.
    public var unkeyedEvents: Int
    /// Blank lines, which are not events and were not produced (counted over every pass).
    public var blankLinesSkipped: Int
    /// Passes over the source that produced at least one event (more than one with `loop`).
    public var passes: Int
    /// From the start to the last event handed to the producer.
    public var seconds: Double
    /// The final flush: waiting for the last delivery reports.
    public var flushSeconds: Double
    /// The configured rate; nil when unpaced.
    public var targetRate: Double?
    /// Times the replayer fell more than `maximumBacklog` behind its schedule and restarted it.
    public var scheduleRestarts: Int
    public var stopReason: StopReason
    /// Events the cluster acknowledged.
    public var delivered: Int
    /// Events that failed for good, by librdkafka error name (such as `_MSG_TIMED_OUT`).
    public var deliveryErrors: [String: Int]
    /// Events neither delivered nor failed when the flush gave up.
    public var undelivered: Int
    /// From `send` to the delivery report, for delivered events.
    public var latency: LatencyHistogram

    public var eventsPerSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }
    public var failed: Int { deliveryErrors.values.reduce(0, +) }

    public init(topic: String, events: Int, bytes: Int, unkeyedEvents: Int, blankLinesSkipped: Int, passes: Int,
                seconds: Double, flushSeconds: Double, targetRate: Double?, scheduleRestarts: Int,
                stopReason: StopReason, delivered: Int, deliveryErrors: [String: Int], undelivered: Int,
                latency: LatencyHistogram) {
        self.topic = topic
        self.events = events
        self.bytes = bytes
        self.unkeyedEvents = unkeyedEvents
        self.blankLinesSkipped = blankLinesSkipped
        self.passes = passes
        self.seconds = seconds
        self.flushSeconds = flushSeconds
        self.targetRate = targetRate
        self.scheduleRestarts = scheduleRestarts
        self.stopReason = stopReason
        self.delivered = delivered
        self.deliveryErrors = deliveryErrors
        self.undelivered = undelivered
        self.latency = latency
    }
}

/// A snapshot taken while a replay runs, for a progress line.
public struct ReplayProgress: Sendable {
    public var events: Int
    public var bytes: Int
    public var elapsedSeconds: Double
    public var delivered: Int
    public var failed: Int

    public var eventsPerSecond: Double { elapsedSeconds > 0 ? Double(events) / elapsedSeconds : 0 }
}
