import Logging
import Runtime

/// The components one restarting service runs in turn (the archiver of `run` and `archive`,
/// the realtime consumer of `run` and `consume`): the one made at start, when it could be made,
/// then a new one after each failure (a component runs once), each resuming from the offsets
/// kept in the store or committed to the group.
final class ComponentSupply<Component: BlockingComponent>: Sendable {
    private let state: Locked<(current: Component?, unused: Bool)>
    private let make: @Sendable () throws -> Component

    /// - Parameters:
    ///   - first: the component made at start; nil when it could not be made yet.
    ///   - make: makes each later one.
    init(first: Component?, make: @escaping @Sendable () throws -> Component) {
        state = Locked((first, first != nil))
        self.make = make
    }

    /// Makes the first component now, so that a bad configuration fails at start.
    convenience init(making make: @escaping @Sendable () throws -> Component) throws {
        self.init(first: try make(), make: make)
    }

    /// The component running now, or the last one; nil until one could be made.
    var current: Component? { state.withLock { $0.current } }

    /// The first component if it has not run yet, else a new one.
    func next() throws -> Component {
        if let first = state.withLock({ state -> Component? in
            defer { state.unused = false }
            return state.unused ? state.current : nil
        }) {
            return first
        }
        let fresh = try make()
        state.withLock { $0.current = fresh }
        return fresh
    }

    /// The components as one service: after a failure a new one is made after a growing delay
    /// (`restart`).
    func service(_ health: ComponentHealth.Handle, restart: RestartPolicy = RestartPolicy(), logger: Logger,
                 onStarted: (@Sendable () -> Void)? = nil) -> ComponentService {
        ComponentService(health, restart: restart, logger: logger, onStarted: onStarted) { try self.next() }
    }
}
