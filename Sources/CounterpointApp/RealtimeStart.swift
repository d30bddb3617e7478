import CounterStore
import Foundation
import Logging
import Realtime
import Runtime

/// How `consume` and `run` start and keep the realtime consumer, also on a full disk
/// (docs/faults.md). When its existing SQLite store cannot be opened for lack of space (SQLite
/// cannot make the `-shm` file), or a PostgreSQL URI that asks for a writable server finds only
/// standbys (a failover under way, which `batch` waits out too: docs/postgresql.md), the
/// process still starts: the consumer service reports why it cannot flush (log, health,
/// `/readyz`) and makes the consumer again after a growing delay until the store opens. A
/// consumer that fails later (on a full disk the seek back to the stored offsets after a
/// rolled-back flush can fail too) is made again the same way. Every new one counts from the
/// stored offsets — nothing lost, nothing twice. Any other failure at start ends the build as
/// before.
struct RealtimeStart: Sendable {
    /// Its `health` is where the consumer service reports.
    let configuration: RealtimeConfiguration
    let logger: Logger

    /// Retries soon, so counting resumes within seconds of space returning.
    static let restart = RestartPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(5), probation: .seconds(2))

    /// Makes the first consumer now (blocks: it reaches the broker and opens the store) and
    /// returns the service that runs it and its successors, with the consumers (for their
    /// status). Without a first one (no space) the service makes them all.
    func service(onStarted: (@Sendable () -> Void)? = nil) throws
        -> (service: ComponentService, consumers: ComponentSupply<RealtimeConsumer>) {
        let first: RealtimeConsumer?
        do {
            first = try RealtimeConsumer(configuration: configuration, logger: logger)
        } catch {
            let awaited = StoreBackend.awaitingPrimary(error) ? StoreBackend.awaitingPrimaryCause : nil
            guard let cause = spaceCause(error) ?? awaited else { throw error }
            logger.warning("the realtime store cannot be opened for writing: \(cause); retrying until it can", metadata: [
                "store": "\(configuration.store)", "store.error": "\(error)",
            ])
            first = nil
        }
        let start = self
        let consumers = ComponentSupply(first: first) { try start.makeConsumer() }
        let health = configuration.health ?? ComponentHealth(logger: logger, clock: configuration.clock).handle(for: "consumer")
        return (consumers.service(health, restart: Self.restart, logger: logger, onStarted: onStarted), consumers)
    }

    /// Makes a consumer, saying why the store cannot take flushes when it cannot be opened.
    private func makeConsumer() throws -> RealtimeConsumer {
        do {
            return try RealtimeConsumer(configuration: configuration, logger: logger)
        } catch {
            guard let cause = spaceCause(error) else { throw error }
            throw CannotFlush(description: "cannot flush: \(cause): the realtime store cannot be opened for writing (\(error))")
        }
    }

    /// "no free space on …" when an existing SQLite store failed to open for lack of space: the
    /// disk is full, or the operating system refuses to create or grow a file on a disk with no
    /// room left. nil for any other failure to open (a wrong directory, permissions), which is
    /// not waited out.
    private func spaceCause(_ error: any Error) -> String? {
        guard case .sqlite(let location) = configuration.store,
              FileManager.default.fileExists(atPath: location.realtimePath) else { return nil }
        return configuration.store.fullDiskCause(of: error)
    }

    private struct CannotFlush: Error, CustomStringConvertible {
        var description: String
    }
}
