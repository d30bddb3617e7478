import Logging
import Runtime

/// Plays a `KafkaFaultSchedule` against a mock cluster on a thread of its own, logging every
/// fault ("kafka fault injected", with `kafka.fault`) and counting them by kind. `stop` brings
/// every broker back up, so the cluster ends healthy.
public final class KafkaFaultInjector: Sendable {
    private enum Action {
        case inject(KafkaFaultSchedule.Fault)
        case bringUp(broker: Int?)
    }

    private let cluster: KafkaMockCluster
    private let topic: String
    private let partitions: Int
    private let groups: [String]
    private let logger: Logger
    private let stopRequested = Completion<Void>()
    private let injected = Locked<[String: Int]>([:])
    private let thread: Locked<BlockingThread?> = Locked(nil)

    /// Faults for `topic`'s `partitions` and the coordinators of `groups`.
    public init(cluster: KafkaMockCluster, topic: String, partitions: Int, groups: [String], logger: Logger) {
        self.cluster = cluster
        self.topic = topic
        self.partitions = partitions
        self.groups = groups
        self.logger = logger
    }

    /// Starts playing `schedule`, its times counted from now.
    public func start(_ schedule: KafkaFaultSchedule) {
        let start = ContinuousClock.now
        thread.withLock {
            $0 = BlockingThread(name: "kafka-faults") { [self] in play(schedule, from: start) }
        }
        logger.info("kafka fault schedule started", metadata: ["kafka.faults": "\(schedule)"])
    }

    /// Faults injected so far, by `KafkaFaultSchedule.Fault.kind`.
    public var injectedByKind: [String: Int] { injected.withLock { $0 } }

    /// Stops the schedule and brings every broker up. Safe to call more than once.
    public func stop() {
        stopRequested.succeed()
        thread.withLock { $0 }?.join()
        perform(.bringUp(broker: nil))
    }

    private func play(_ schedule: KafkaFaultSchedule, from start: ContinuousClock.Instant) {
        var timeline = schedule.steps.flatMap { step -> [(at: Duration, action: Action)] in
            guard case .down(let broker, let duration) = step.fault else { return [(step.at, .inject(step.fault))] }
            return [(step.at, .inject(step.fault)), (step.at + duration, .bringUp(broker: broker))]
        }
        var round: Duration = .zero
        while true {
            timeline.sort { $0.at < $1.at }
            for (at, action) in timeline {
                let due = start + round + at
                if due > .now, stopRequested.wait(timeout: due - .now) != nil { return }
                if stopRequested.finished != nil { return }
                perform(action)
            }
            guard let period = schedule.period else { return }
            round += period
        }
    }

    private func perform(_ action: Action) {
        do {
            switch action {
            case .bringUp(let broker):
                for id in broker.map({ [$0] }) ?? Array(cluster.brokerIDs) { try cluster.bringUp(broker: id) }
                return
            case .inject(let fault):
                try inject(fault)
                injected.withLock { $0[fault.kind, default: 0] += 1 }
                logger.info("kafka fault injected", metadata: [
                    "kafka.fault": "\(fault.kind)", "kafka.fault.seconds": "\(fault.duration.components.seconds)",
                ])
            }
        } catch {
            logger.warning("kafka fault could not be injected", metadata: ["kafka.fault": "\(action)", "error": "\(error)"])
        }
    }

    private func inject(_ fault: KafkaFaultSchedule.Fault) throws(KafkaError) {
        switch fault {
        case .down(let broker, _):
            for id in broker.map({ [$0] }) ?? Array(cluster.brokerIDs) { try cluster.takeDown(broker: id) }
        case .moveLeaders:
            // Round-robin one step further on, whoever leads now.
            let shift = (injected.withLock { $0[fault.kind] ?? 0 } + 1)
            for partition in 0..<partitions {
                try cluster.moveLeader(topic: topic, partition: Int32(partition),
                                       to: (partition + shift) % cluster.brokers + 1)
            }
        case .moveCoordinator(let broker):
            for group in groups { try cluster.moveCoordinator(group: group, to: broker) }
        case .errors(let request, let count):
            cluster.inject(errors: Array(repeating: .typical(for: request), count: count), on: request)
        case .slow(let request, let count, let delay):
            for broker in cluster.brokerIDs { try cluster.delay(request, on: broker, by: delay, count: count) }
        }
    }
}
