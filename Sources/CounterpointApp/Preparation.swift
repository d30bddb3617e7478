import Logging
import Runtime
import ServiceLifecycle

/// Long work that some services of an application need done before they can be made (`run`'s
/// demo history and first batch run), done inside the application's group so that the services
/// that need nothing of it — the reader — answer meanwhile, and so that SIGINT/SIGTERM stops it.
///
/// Its services (`services(named:)`, then `service`) take their places in the group from the
/// start: each waits for the work, which makes them, then runs its own. The work reports what it
/// does as the state of the component `health` names — `starting` with a reason ("generating
/// demo history: 412,000 of 864,000 events"); it turns `running` once the work has made the
/// services and `stopped` when the group stops — so `/readyz` answers 503 with it until then.
final class Preparation: Sendable {
    let health: ComponentHealth.Handle
    private let made = Completion<[ComponentService]>()
    private let work: @Sendable (_ stop: StopSignal) throws -> [ComponentService]
    private let logger: Logger

    /// - Parameter work: makes the services, in the order of `services(named:)`; it checks
    ///   `stop` between its steps (or registers how to cut a step short) and throws
    ///   `PreparationStopped` when it was raised.
    init(health: ComponentHealth.Handle, doing first: String, logger: Logger,
         work: @escaping @Sendable (_ stop: StopSignal) throws -> [ComponentService]) {
        self.health = health
        self.work = work
        self.logger = logger
        health.update(.starting(reason: first))
    }

    /// The services the work makes, by name, each waiting for it. Put them before `service` in
    /// the group: it stops in the reverse order, so the work has ended (and each of these knows
    /// what it runs, or that it runs nothing) before any of them is asked to stop.
    func services(named names: [String]) -> [any ApplicationService] {
        names.enumerated().map { index, name in Made(name: name, index: index, made: made) }
    }

    /// The work itself, as a service: it ends the group when the work fails, and otherwise
    /// stays until the group stops.
    var service: any ApplicationService { Work(preparation: self) }

    private struct Work: ApplicationService {
        let preparation: Preparation

        var configuration: ServiceGroupConfiguration.ServiceConfiguration {
            .init(service: self, successTerminationBehavior: .gracefullyShutdownGroup,
                  failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: preparation.health.name)
        }

        func run() async throws {
            let (work, health) = (preparation.work, preparation.health)
            let stop = StopSignal()
            let outcome = await withGracefulShutdownHandler {
                await withTaskCancellationHandler { () async -> Result<[ComponentService], any Error> in
                    do {
                        return .success(try await BlockingThread.run(name: "prepare") { try work(stop) })
                    } catch {
                        return .failure(error)
                    }
                } onCancel: {
                    stop.request()
                }
            } onGracefulShutdown: {
                stop.request()
            }
            // A stop asked for while the last step ended starts nothing only to stop it.
            guard !stop.isRequested else {
                preparation.made.complete(.failure(PreparationStopped()))
                health.update(.stopped)
                if case .failure(let error) = outcome, !(error is PreparationStopped) {
                    preparation.logger.info("preparation stopped", metadata: ["error": "\(error)"])
                }
                return
            }
            preparation.made.complete(outcome)
            if case .failure(let error) = outcome {
                health.update(.failed(reason: "\(error)"))
                throw error
            }
            health.update(.running)
            try? await gracefulShutdown()
            health.update(.stopped)
        }
    }

    /// One service the work makes, in its place in the group from the start.
    private struct Made: ApplicationService {
        let name: String
        let index: Int
        let made: Completion<[ComponentService]>

        var configuration: ServiceGroupConfiguration.ServiceConfiguration {
            .init(service: self, successTerminationBehavior: .gracefullyShutdownGroup,
                  failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: name)
        }

        func run() async throws {
            // Ends when the work does: it is stopped before this service is (see `services(named:)`).
            guard case .success(let services) = await made.result else {
                // Nothing to run; the group, which the work's end stops, expects each service
                // to end only when its turn to stop comes.
                try? await gracefulShutdown()
                return
            }
            try await services[index].run()
        }
    }
}

/// What the work of a `Preparation` throws when its stop signal was raised.
struct PreparationStopped: Error, CustomStringConvertible {
    var description: String { "stopped before it was prepared" }
}
