import Logging
import Metrics

/// What one long-running component is doing, as `/readyz`, `/v1/status`, `/metrics` and the
/// log report it (docs/runbook.md: a failing component is never silent).
public enum ComponentState: Sendable, Equatable {
    /// Not doing its job yet; `reason` says what it waits for when that takes a while (`run`'s
    /// preparation: "generating demo history: 412,000 of 864,000 events").
    case starting(reason: String? = nil)
    case running
    /// Not doing its job right now but retrying by itself (a full disk, a restart under way).
    case degraded(reason: String)
    /// Ended by a failure it cannot recover from.
    case failed(reason: String)
    /// Stopped cleanly.
    case stopped

    /// `starting`, `running`, `degraded`, `failed` or `stopped`, as JSON and metrics show it.
    public var name: String {
        switch self {
        case .starting: "starting"
        case .running: "running"
        case .degraded: "degraded"
        case .failed: "failed"
        case .stopped: "stopped"
        }
    }

    public var reason: String? {
        switch self {
        case .starting(let reason): reason
        case .degraded(let reason), .failed(let reason): reason
        default: nil
        }
    }

    /// The reason of a component that is not doing its job when it should (degraded or
    /// failed); nil while it starts, runs or after it stopped.
    var problem: String? {
        switch self {
        case .degraded(let reason), .failed(let reason): reason
        default: nil
        }
    }
}

/// One component's state and since when it holds, epoch milliseconds.
public struct ComponentReport: Sendable, Equatable {
    public var name: String
    public var state: ComponentState
    public var since: Int64
}

/// The states of a process's components, in the order they were first reported. Every change
/// is logged (failures at error level, degradation at warning level, recovery at info) and
/// exported as metrics:
/// - `counterpoint_component_up{component}`: 1 while running, else 0;
/// - `counterpoint_component_failures_total{component}`: transitions into degraded or failed;
/// - `counterpoint_component_problem_info{component,state,reason}`: 1 for the current problem
///   of each component that has one (removed when it recovers), so the reason is visible.
public final class ComponentHealth: Sendable {
    private struct Entry {
        var report: ComponentReport
        var problem: Gauge?
    }

    private let entries = Locked<[Entry]>([])
    private let logger: Logger
    private let clock: WallClock

    /// - Parameter clock: when each state began (`since`), as `/v1/status` shows it.
    public init(logger: Logger, clock: WallClock = .system) {
        self.logger = logger
        self.clock = clock
    }

    func update(_ name: String, _ state: ComponentState) {
        let now = clock.epochMilliseconds()
        let previous = entries.withLock { entries -> ComponentState? in
            if let index = entries.firstIndex(where: { $0.report.name == name }) {
                let previous = entries[index].report.state
                guard previous != state else { return previous }
                // What a starting component waits for changes as it gets on; it starts since the first report.
                if case .starting = previous, case .starting = state {
                    entries[index].report.state = state
                    return previous
                }
                entries[index].report = ComponentReport(name: name, state: state, since: now)
                entries[index].problem?.destroy()
                entries[index].problem = Self.problemGauge(name, state)
                return previous
            }
            entries.append(Entry(report: ComponentReport(name: name, state: state, since: now),
                                 problem: Self.problemGauge(name, state)))
            return nil
        }
        guard previous != state else { return }
        if case .starting? = previous, case .starting = state { return }
        Gauge(label: "counterpoint_component_up", dimensions: [("component", name)]).record(state == .running ? 1 : 0)
        let metadata: Logger.Metadata = ["component": "\(name)", "component.state": "\(state.name)"]
        switch state {
        case .failed(let reason):
            Counter(label: "counterpoint_component_failures_total", dimensions: [("component", name)]).increment()
            logger.error("component failed", metadata: metadata.merging(["component.reason": "\(reason)"]) { $1 })
        case .degraded(let reason):
            Counter(label: "counterpoint_component_failures_total", dimensions: [("component", name)]).increment()
            logger.warning("component degraded", metadata: metadata.merging(["component.reason": "\(reason)"]) { $1 })
        case .running:
            if case .degraded = previous { logger.info("component recovered", metadata: metadata) }
        case .starting, .stopped:
            break
        }
    }

    /// The handle through which the component `name` reports its state: made once by whoever
    /// builds the component, and handed to it and to its `ComponentService`.
    public func handle(for name: String) -> Handle {
        Handle(name: name, board: self)
    }

    /// One component's place on the board.
    public struct Handle: Sendable {
        public let name: String
        /// The board this entry is on.
        public let board: ComponentHealth

        public func update(_ state: ComponentState) {
            board.update(name, state)
        }

        /// Another entry on the same board, such as the component's Kafka connection.
        public func handle(for name: String) -> Handle {
            board.handle(for: name)
        }

        /// The state last reported; nil before the first report.
        public var state: ComponentState? {
            board.reports().first { $0.name == name }?.state
        }
    }

    public func reports() -> [ComponentReport] {
        entries.withLock { $0.map(\.report) }
    }

    /// True when every component runs: what `/readyz` answers 200 for. A process without
    /// components (`serve`) is healthy.
    public var allRunning: Bool {
        entries.withLock { $0.allSatisfy { $0.report.state == .running } }
    }

    /// The HELP text of the metrics above, for the executable's Prometheus exposition.
    public static let metricHelp: [String: String] = [
        "counterpoint_component_up": "1 while the component runs, 0 while it starts, is degraded, failed or stopped.",
        "counterpoint_component_failures_total": "Times the component became degraded or failed.",
        "counterpoint_component_problem_info": "1 for the current problem of a component that has one, with its reason.",
    ]

    private static func problemGauge(_ name: String, _ state: ComponentState) -> Gauge? {
        guard let reason = state.problem else { return nil }
        // A label value stays short: the full reason is in the log and `/v1/status`.
        let gauge = Gauge(label: "counterpoint_component_problem_info",
                          dimensions: [("component", name), ("state", state.name), ("reason", String(reason.prefix(160)))])
        gauge.record(1)
        return gauge
    }
}
