#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Kafka
import Logging
import Runtime

/// Produces the events of a `ReplaySource` to Kafka, paced or as fast as possible, and says
/// how it went: the load generator behind `counterpoint replay` and `run --demo`.
///
/// - Keys: a valid event is keyed by its `track_id` in decimal (docs/event-format.md), so all plays of a
///   track land in one partition; a line that is not a valid event is produced all the same,
///   without a key, because load tests include bad input.
/// - Pacing (`ReplayConfiguration.rate`): event `i` is due `i / rate` after the start on a
///   monotonic clock, and events due together go in bursts at most every `burstInterval`, so
///   the achieved rate does not drift from the target while the producer keeps up.
/// - Backpressure: `KafkaProducer.send` waits when its queue is full; nothing is dropped. A
///   stop ends that wait: what was not sent is not counted as sent.
/// - Threading: `run` blocks its caller (give it a thread of its own, never a task on the
///   cooperative pool); its `StopSignal` may be raised from any thread, at any time.
public final class Replayer: Sendable {
    public let source: ReplaySource
    public let configuration: ReplayConfiguration
    private let producer: KafkaProducer
    private let logger: Logger

    /// `producer` should be this replayer's own for exact delivery figures: delivery counts are
    /// the producer's changes during `run`, and latencies are those of all its messages.
    public init(source: ReplaySource, producer: KafkaProducer, configuration: ReplayConfiguration, logger: Logger) {
        self.source = source
        self.producer = producer
        self.configuration = configuration
        self.logger = logger
    }

    /// Produces until the source ends (without `loop`), `limit` or `duration` is reached, or
    /// `stop` is raised; then waits up to `flushTimeout` (`flushTimeoutAfterStop` after a stop)
    /// for delivery reports and returns the summary. `progress` is called every `progressInterval` on this thread.
    public func run(until stop: StopSignal = StopSignal(),
                    progress: (ReplayProgress) -> Void = { _ in }) throws(ReplayError) -> ReplaySummary {
        try configuration.validate()
        let baseline = producer.deliveryStatistics
        var stream = source.makeStream()
        var loop = ReplayLoop(configuration: configuration, stop: stop, producer: producer,
                              baseline: baseline)
        defer { loop.release() }
        logger.info("replay starting", metadata: [
            "replay.topic": "\(configuration.topic)",
            "replay.rate": "\(configuration.pacedRate.map { "\($0)" } ?? "unlimited")",
            "replay.loop": "\(configuration.loop)",
        ])

        var failure: ReplayError?
        do throws(ReplayError) {
            while true {
                let sentBefore = loop.sent
                defer { if loop.sent > sentBefore { loop.passes += 1 } }
                let finished = try stream.pass { event, trackID throws(ReplayError) in
                    try loop.admitAndSend(event, trackID: trackID, progress: progress)
                }
                guard finished else { break }
                // A pass of blank lines only would loop forever without producing anything.
                guard configuration.loop, stream.canRepeat, loop.sent > sentBefore else {
                    loop.stopReason = .endOfLogs
                    break
                }
            }
        } catch {
            failure = error
        }
        let sendingEnded = ContinuousClock.now

        var flushTimedOut = false
        do {
            try producer.flush(timeout: configuration.finalFlushTimeout(stopped: loop.stopReason == .stopped))
        } catch {
            flushTimedOut = true
            logger.warning("replay flush timed out", metadata: ["replay.error": "\(error)"])
        }
        let flushEnded = ContinuousClock.now
        if let failure { throw failure }

        let summary = loop.summary(blankLinesSkipped: stream.blankLinesSkipped,
                                   sendingEnded: sendingEnded, flushEnded: flushEnded,
                                   statistics: producer.deliveryStatistics)
        logger.info("replay finished", metadata: [
            "replay.events": "\(summary.events)", "replay.delivered": "\(summary.delivered)",
            "replay.seconds": "\(summary.seconds)", "replay.stop": "\(summary.stopReason.rawValue)",
            "replay.flushTimedOut": "\(flushTimedOut)",
        ])
        return summary
    }
}

/// The state of one `Replayer.run`: what was sent, the schedule, and when to stop.
private struct ReplayLoop {
    let configuration: ReplayConfiguration
    let stop: StopSignal
    let producer: KafkaProducer
    let baseline: DeliveryStatistics
    let start = ContinuousClock.now
    let deadline: ContinuousClock.Instant?
    var pacer: Pacer?

    var sent = 0
    var bytes = 0
    var unkeyed = 0
    var passes = 0
    var stopReason = ReplaySummary.StopReason.endOfLogs
    /// Events that may go before the clock is read again.
    private var admitted = 0
    private var lastWake: ContinuousClock.Instant
    private var nextProgress: ContinuousClock.Instant
    /// Room for a track id in decimal (at most 16 digits for 2^53 − 1).
    private let keyBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 20, alignment: 1)

    /// Unpaced, the clock is read once per this many events to notice stop, deadline and progress.
    private static let unpacedCheckInterval = 256

    init(configuration: ReplayConfiguration, stop: StopSignal, producer: KafkaProducer,
         baseline: DeliveryStatistics) {
        self.configuration = configuration
        self.stop = stop
        self.producer = producer
        self.baseline = baseline
        let start = self.start
        deadline = configuration.duration.map { start + $0 }
        pacer = configuration.pacedRate.map { Pacer(rate: $0, origin: start, maximumBacklog: configuration.maximumBacklog) }
        lastWake = start - configuration.burstInterval
        nextProgress = start + configuration.progressInterval
    }

    func release() {
        keyBuffer.deallocate()
    }

    /// Waits until the event may go, then sends it; false when the replay must stop instead.
    mutating func admitAndSend(_ event: UnsafeRawBufferPointer, trackID: Int64?,
                               progress: (ReplayProgress) -> Void) throws(ReplayError) -> Bool {
        if sent >= admitted {
            guard checkpoint(progress: progress) else { return false }
        }
        let key = trackID.map(decimalKey)
        do {
            guard try producer.send(topic: configuration.topic, key: key, value: event, unless: stop) else {
                stopReason = .stopped
                return false
            }
        } catch {
            throw .kafka(error)
        }
        if key == nil { unkeyed += 1 }
        sent += 1
        bytes += event.count
        return true
    }

    /// Reads the clock: decides whether to stop, reports progress, and sleeps until the next
    /// burst is due. Sets `admitted` beyond `sent` and returns true when sending may go on.
    private mutating func checkpoint(progress: (ReplayProgress) -> Void) -> Bool {
        while true {
            let now = ContinuousClock.now
            if stop.isRequested {
                stopReason = .stopped
                return false
            }
            if let limit = configuration.limit, sent >= limit {
                stopReason = .limit
                return false
            }
            if let deadline, now >= deadline {
                stopReason = .duration
                return false
            }
            if now >= nextProgress {
                nextProgress = now + configuration.progressInterval
                progress(currentProgress(at: now))
            }
            var allowance = pacer?.allowance(at: now, sent: sent) ?? sent + Self.unpacedCheckInterval
            if let limit = configuration.limit { allowance = min(allowance, limit) }
            if allowance > sent {
                admitted = allowance
                return true
            }
            guard let pacer else { continue }
            // Nothing is due yet: sleep until the next event is (a stop cuts the sleep short), but
            // leave at least a burst interval between wakes, and wake often enough to notice the deadline.
            var wake = max(pacer.dueInstant(ofEvent: sent), lastWake + configuration.burstInterval)
            wake = min(wake, now + .milliseconds(50))
            if let deadline { wake = min(wake, deadline) }
            if wake > now { stop.sleep(for: wake - now) }
            lastWake = ContinuousClock.now
        }
    }

    /// `trackID` in decimal, in `keyBuffer`.
    private func decimalKey(_ trackID: Int64) -> UnsafeRawBufferPointer {
        var value = UInt64(max(0, trackID))
        var index = keyBuffer.count
        repeat {
            index -= 1
            keyBuffer[index] = UInt8(truncatingIfNeeded: value % 10) &+ UInt8(ascii: "0")
            value /= 10
        } while value > 0
        return UnsafeRawBufferPointer(rebasing: keyBuffer[index...])
    }

    private func currentProgress(at now: ContinuousClock.Instant) -> ReplayProgress {
        let statistics = producer.deliveryStatistics
        return ReplayProgress(events: sent, bytes: bytes, elapsedSeconds: (now - start).seconds,
                              delivered: statistics.delivered - baseline.delivered,
                              failed: statistics.failed - baseline.failed)
    }

    func summary(blankLinesSkipped: Int, sendingEnded: ContinuousClock.Instant,
                 flushEnded: ContinuousClock.Instant, statistics: DeliveryStatistics) -> ReplaySummary {
        var errors = statistics.failuresByError
        for (name, count) in baseline.failuresByError { errors[name, default: 0] -= count }
        errors = errors.filter { $0.value > 0 }
        let delivered = statistics.delivered - baseline.delivered
        return ReplaySummary(
            topic: configuration.topic, events: sent, bytes: bytes, unkeyedEvents: unkeyed,
            blankLinesSkipped: blankLinesSkipped, passes: passes,
            seconds: (sendingEnded - start).seconds, flushSeconds: (flushEnded - sendingEnded).seconds,
            targetRate: configuration.pacedRate, scheduleRestarts: pacer?.restarts ?? 0, stopReason: stopReason,
            delivered: delivered, deliveryErrors: errors,
            undelivered: max(0, sent - delivered - errors.values.reduce(0, +)), latency: statistics.latency)
    }
}
