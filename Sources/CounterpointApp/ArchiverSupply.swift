import Archive
import Logging
import Runtime

/// The archivers of `run` and `archive`: the one made at start, then a new one after each
/// failure (an archiver runs once), each resuming from the group's committed offsets.
final class ArchiverSupply: Sendable {
    private let state: Locked<(current: Archiver, unused: Bool)>
    private let configuration: ArchiverConfiguration
    private let logger: Logger

    init(first: Archiver, configuration: ArchiverConfiguration, logger: Logger) {
        state = Locked((first, true))
        self.configuration = configuration
        self.logger = logger
    }

    /// Makes the first archiver now, so that a bad configuration fails at start.
    convenience init(configuration: ArchiverConfiguration, logger: Logger) throws {
        self.init(first: try Archiver(configuration: configuration, logger: logger), configuration: configuration, logger: logger)
    }

    /// The archiver running now, or the last one.
    var current: Archiver { state.withLock { $0.current } }

    func next() throws -> Archiver {
        if let first = state.withLock({ state -> Archiver? in
            defer { state.unused = false }
            return state.unused ? state.current : nil
        }) {
            return first
        }
        let fresh = try Archiver(configuration: configuration, logger: logger)
        state.withLock { $0.current = fresh }
        return fresh
    }

    /// The archiver as a service: after a failure (a full disk) a new one resumes from the last
    /// committed offsets, after a growing delay.
    func service(health: ComponentHealth, logger: Logger, onStarted: (@Sendable () -> Void)? = nil) -> ComponentService {
        ComponentService(health.handle(for: "archiver"), restart: RestartPolicy(), logger: logger, onStarted: onStarted) {
            try self.next()
        }
    }
}
