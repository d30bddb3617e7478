import Logging
import Runtime

/// Holds a Kafka consumer's polling thread once, between a poll that returned a message and the
/// drain of the rest of its batch, until librdkafka has queued a revocation for that consumer:
/// the interleaving in which a rebalance is served in the middle of taking a batch. Give the
/// consumer `pass` as its `afterFirstMessage` hook, `logger(label:)` as its logger and
/// `debugOptions` among its librdkafka properties.
public final class PollWindow: Sendable {
    /// Makes librdkafka log the consumer group's steps, among them the one this waits for.
    public static let debugOptions = [("debug", "cgrp")]

    private let armed = Locked(false)
    private let reached = Completion<Void>()
    private let revocationQueued = Completion<Void>()
    private let released = Completion<Void>()

    public init() {}

    /// Holds the consumer at its next poll that returns a message.
    public func arm() {
        armed.set(true)
    }

    /// The consumer's hook: holds the first poll after `arm` until `release`.
    public func pass() {
        guard armed.withLock({ armed in defer { armed = false }; return armed }) else { return }
        reached.succeed()
        _ = released.wait()
    }

    /// The consumer is held (or was).
    public var isHolding: Bool { reached.finished != nil }

    /// librdkafka is queuing a revocation for the consumer.
    public var revocationIsQueued: Bool { revocationQueued.finished != nil }

    /// Lets the held consumer go on into the drain; after a revocation was queued, a moment
    /// later, since librdkafka logs its line just before it queues it.
    public func release() async {
        if revocationIsQueued { try? await Task.sleep(for: .milliseconds(200)) }
        released.succeed()
    }

    /// A logger that notices librdkafka's "delegating revoke" line and drops everything else.
    public func logger(label: String) -> Logger {
        Logger(label: label) { [revocationQueued] _ in RevocationWatch(revocationQueued: revocationQueued) }
    }

    private struct RevocationWatch: LogHandler {
        let revocationQueued: Completion<Void>
        var metadata: Logger.Metadata = [:]
        var logLevel = Logger.Level.trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            if "\(event.message)".contains("delegating revoke") { revocationQueued.succeed() }
        }
    }
}
