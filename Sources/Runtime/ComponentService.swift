import Logging
import ServiceLifecycle

/// A long-running part that works on threads of its own (a consumer, the archiver, the HTTP
/// reader, a producer): started once, stopped once, and able to end by itself on a failure.
public protocol BlockingComponent: AnyObject, Sendable {
    /// Starts the work on the component's own threads and returns.
    func start() throws
    /// Asks the work to stop, waits until it has (flushes, commits and closes included) and
    /// rethrows the failure that ended it, if one did. Safe to call more than once: every
    /// call waits for the same end and reports the same outcome.
    func stop() throws
    /// Completes when the work has ended, by `stop` or by a failure of its own.
    var ended: Completion<Void> { get }
}

/// After a failure, how long to wait before making and starting the component again.
/// A restarted component counts as running again only once it has run `probation` without
/// failing (a full disk fails it again as soon as it writes); the delay then starts over.
public struct RestartPolicy: Sendable {
    public var initialDelay: Duration
    public var maximumDelay: Duration
    public var probation: Duration

    public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30),
                probation: Duration = .seconds(10)) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.probation = probation
    }
}

/// The one way a `BlockingComponent` runs in a swift-service-lifecycle `ServiceGroup`.
///
/// `run()` starts the component off the cooperative pool, then awaits its end without polling.
/// On graceful shutdown (SIGINT/SIGTERM, or another service ending) it stops the component on
/// a thread of its own and returns once the component has. A component that fails by itself
/// either ends the service with its error — the group then shuts down the rest in reverse
/// order and the process exits non-zero — or, with a `RestartPolicy`, is reported degraded and
/// made again after a growing delay. Every state goes to `health`.
public struct ComponentService: Service, CustomStringConvertible {
    public let description: String
    private let make: @Sendable () throws -> any BlockingComponent
    private let health: ComponentHealth.Handle
    private let restart: RestartPolicy?
    private let onStarted: (@Sendable () -> Void)?
    private let logger: Logger

    /// Runs `component`; its failure ends the service. `onStarted` runs once it has started —
    /// inside the group, whose SIGINT/SIGTERM handling is in place by then: the moment to tell
    /// scripts and tests that the process is up.
    public init(_ health: ComponentHealth.Handle, component: any BlockingComponent, logger: Logger,
                onStarted: (@Sendable () -> Void)? = nil) {
        self.init(health, restart: nil, logger: logger, onStarted: onStarted, make: { component })
    }

    /// Makes a component with `make` and runs it; after a failure (of `make`, `start` or the
    /// component) waits as `restart` says and makes a new one.
    public init(_ health: ComponentHealth.Handle, restart: RestartPolicy?, logger: Logger,
                onStarted: (@Sendable () -> Void)? = nil, make: @escaping @Sendable () throws -> any BlockingComponent) {
        self.description = health.name
        self.make = make
        self.health = health
        self.restart = restart
        self.onStarted = onStarted
        self.logger = logger
        health.update(.starting())
    }

    /// The configuration that lets the group stop the other services in order when this one ends.
    public var configuration: ServiceGroupConfiguration.ServiceConfiguration {
        .init(service: self, successTerminationBehavior: .gracefullyShutdownGroup,
              failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: description)
    }

    public func run() async throws {
        var backoff = restart.map { Backoff(initial: $0.initialDelay, maximum: $0.maximumDelay) }
        var lastFailure: (any Error)?
        while true {
            let failure: any Error
            let provedHealthy = Locked(false)
            do {
                try await runOnce(after: lastFailure, provedHealthy: provedHealthy)
                health.update(.stopped)
                return
            } catch {
                failure = error
            }
            lastFailure = failure
            if provedHealthy.value { backoff?.succeeded() }
            guard var retry = backoff, !Task.isShuttingDownGracefully, !Task.isCancelled else {
                health.update(.failed(reason: "\(failure)"))
                throw ComponentFailure(component: description, underlying: failure)
            }
            let wait = retry.failed()
            backoff = retry
            health.update(.degraded(reason: "\(failure); restarting in \(wait.seconds) s"))
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
            } catch {
                health.update(.stopped)
                return
            }
        }
    }

    /// Makes, starts and runs one component until it ends; throws its failure. After a
    /// failure (`previous`), the new component stays degraded through its probation.
    private func runOnce(after previous: (any Error)?, provedHealthy: Locked<Bool>) async throws {
        let make = self.make
        let component = try await BlockingThread.run(name: "start") {
            let component = try make()
            try component.start()
            return component
        }
        var probation: Task<Void, Never>?
        if let previous, let restart {
            health.update(.degraded(reason: "restarted after: \(previous); on probation for \(restart.probation.seconds) s"))
            let health = health
            probation = Task {
                guard (try? await Task.sleep(for: restart.probation)) != nil, component.ended.finished == nil else { return }
                provedHealthy.set(true)
                health.update(.running)
            }
        } else {
            provedHealthy.set(true)
            health.update(.running)
            onStarted?()
        }
        defer { probation?.cancel() }
        let stopInBackground: @Sendable () -> Void = {
            _ = BlockingThread(name: "stop") { _ = try? component.stop() }
        }
        _ = await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await component.ended.result
            } onCancel: {
                stopInBackground()
            }
        } onGracefulShutdown: {
            stopInBackground()
        }
        // Releases what the component holds and reports how it ended (the same outcome for
        // every caller of `stop`).
        try await BlockingThread.run(name: "stop") { try component.stop() }
    }
}

/// A component ended by a failure: says which one, with its error.
public struct ComponentFailure: Error, CustomStringConvertible {
    public let component: String
    public let underlying: any Error

    public var description: String { "\(component) failed: \(underlying)" }
}
