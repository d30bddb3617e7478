import Logging
import Patience
import Runtime
import ServiceLifecycle
import Testing

/// A component whose work waits until it is stopped or told to fail.
final class FakeComponent: BlockingComponent {
    let ended = Completion<Void>()
    let started = Locked(false)
    let stops = Locked(0)
    private let name: String
    private let stopLog: Locked<[String]>?

    init(name: String = "fake", stopLog: Locked<[String]>? = nil) {
        self.name = name
        self.stopLog = stopLog
    }

    func start() throws {
        started.set(true)
    }

    func fail(_ message: String) {
        ended.complete(.failure(FakeFailure(message: message)))
    }

    func stop() throws {
        stops.withLock { $0 += 1 }
        if ended.finished == nil { stopLog?.withLock { $0.append(name) } }
        ended.succeed()
        try ended.wait().get()
    }
}

struct FakeFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

@Suite("component services", .onTestThreads)
struct ComponentServiceTests {
    let logger = Logger(label: "test")

    @Test("a component that fails by itself ends its service with the failure, reported failed with its reason")
    func failurePropagates() async throws {
        let health = ComponentHealth(logger: logger)
        let component = FakeComponent()
        let service = ComponentService(health.handle(for: "fake"), component: component, logger: logger)
        let running = Task { try await service.run() }
        while health.reports().first?.state != .running { try await Task.sleep(for: .milliseconds(1)) }
        #expect(component.started.value)
        #expect(health.allRunning)
        component.fail("disk on fire")
        await #expect(throws: ComponentFailure.self) { try await running.value }
        #expect(health.reports().first?.state == .failed(reason: "disk on fire"))
        #expect(!health.allRunning)
    }

    @Test("a starting component says what it waits for; its reason changes without resetting since when it starts, and it is no problem")
    func startingWithReason() async throws {
        let health = ComponentHealth(logger: logger)
        let run = health.handle(for: "run")
        run.update(.starting(reason: "generating demo history: 0 of 10 events"))
        let since = try #require(health.reports().first?.since)
        try await Task.sleep(for: .milliseconds(5))
        run.update(.starting(reason: "generating demo history: 5 of 10 events"))
        let report = try #require(health.reports().first)
        #expect(report.state == .starting(reason: "generating demo history: 5 of 10 events"))
        #expect(report.state.name == "starting" && report.state.reason == "generating demo history: 5 of 10 events")
        #expect(report.since == since)
        #expect(!health.allRunning)
        run.update(.running)
        #expect(health.allRunning && health.reports().first?.state.reason == nil)
    }

    @Test("graceful shutdown of the group stops every component, in reverse order, and reports them stopped")
    func gracefulShutdownStops() async throws {
        let health = ComponentHealth(logger: logger)
        let order = Locked<[String]>([])
        let first = FakeComponent(name: "first", stopLog: order), second = FakeComponent(name: "second", stopLog: order)
        let services = [
            ComponentService(health.handle(for: "first"), component: first, logger: logger),
            ComponentService(health.handle(for: "second"), component: second, logger: logger),
        ]
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.map(\.configuration), logger: logger))
        async let running: Void = group.run()
        while !(first.started.value && second.started.value) { try await Task.sleep(for: .milliseconds(1)) }
        await group.triggerGracefulShutdown()
        try await running
        #expect(health.reports().map(\.state) == [.stopped, .stopped])
        #expect(first.stops.value >= 1 && second.stops.value >= 1)
        #expect(order.value == ["second", "first"], "the last listed stops first")
    }

    @Test("with a restart policy a failed component is reported degraded and made again, then running after its probation")
    func restartAfterFailure() async throws {
        let health = ComponentHealth(logger: logger)
        let made = Locked<[FakeComponent]>([])
        let service = ComponentService(
            health.handle(for: "restarting"),
            restart: RestartPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), probation: .milliseconds(50)),
            logger: logger
        ) {
            let component = FakeComponent()
            made.withLock { $0.append(component) }
            return component
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service.configuration], logger: logger))
        async let running: Void = group.run()
        while made.value.first?.started.value != true { try await Task.sleep(for: .milliseconds(1)) }
        made.value[0].fail("full disk")
        while made.value.count < 2 { try await Task.sleep(for: .milliseconds(1)) }
        if case .degraded(let reason) = health.reports()[0].state {
            #expect(reason.contains("full disk"))
        } else {
            Issue.record("expected degraded, got \(health.reports()[0].state)")
        }
        while health.reports()[0].state != .running { try await Task.sleep(for: .milliseconds(5)) }
        await group.triggerGracefulShutdown()
        try await running
        #expect(health.reports()[0].state == .stopped)
    }

    @Test("a blocking job's result is its outcome, and stopping it early asks it to return")
    func blockingJob() async throws {
        let job = BlockingJob(name: "job") { stop -> Int in
            stop.wait()
            return 7
        }
        job.start()
        try job.stop()
        #expect(try await job.outcome.result.get() == 7)
        try job.stop()
    }
}
