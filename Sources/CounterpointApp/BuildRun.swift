import Archive
import CounterpointCore
import CounterStore
import Foundation
import Generator
import Kafka
import Logging
import Reader
import Realtime
import Replay
import Runtime

/// `counterpoint run`: the realtime consumer, the archiver, the scheduled batch, the reader and,
/// for a demo, live traffic — on an embedded broker unless `configuration.brokers` names one.
///
/// Builds off the cooperative pool what is quick to build — the claim on the data directory, the
/// embedded broker, the reader, which listens from then on — and leaves the long preparation to
/// the application's group (`Preparation`): the demo history, a first batch run over what the
/// logs already hold, then the consumer, the archiver, the scheduled batch and the demo traffic.
/// Meanwhile the reader answers from the stores as they are, `/healthz` 200 and `/readyz` 503 with
/// what the preparation waits for (the `run` component, `starting` with a reason); SIGINT/SIGTERM
/// stops it (the demo history at once, a batch run once it has committed or rolled back). The
/// services stop in the order reader, demo traffic, scheduled batch, archiver, consumer; the
/// embedded broker outlives all of them. With `embeddedFaults` the faults start once everything
/// is built and stop, every broker up again, once every service has stopped.
/// - Parameter onListening: called with the reader's port once it listens, inside the group (so
///   with SIGINT/SIGTERM handled) — before the preparation has finished: `/readyz` says when the
///   run is ready.
public func buildRun(_ configuration: RunConfiguration, logger: Logger,
                     onListening: (@Sendable (_ port: Int) -> Void)? = nil) async throws -> Application {
    try await BlockingThread.run(name: "build") {
        // On its embedded broker, the run owns its data directory: the realtime store's offsets
        // are that broker's, which a second run there would forget (`EarlierBrokerOffsets`).
        let claim = try configuration.brokers == nil ? claimDataDirectory(configuration.dataDirectory) : nil
        // The broker: the one given, or an embedded one that outlives every client of it (if
        // building fails, the clients made so far are released before it).
        var embedded: KafkaMockCluster?
        if configuration.brokers == nil {
            let cluster = try KafkaMockCluster(brokers: configuration.embeddedFaults == nil ? 1 : 3, logger: logger)
            try cluster.createTopic(configuration.topic, partitions: configuration.partitions)
            embedded = cluster
        }
        let bootstrapServers = configuration.brokers ?? embedded?.bootstrapServers ?? ""
        let health = ComponentHealth(logger: logger, clock: configuration.clock)
        // The consumers' and archivers' status, for `/v1/status`, once the preparation has made them.
        let liveStatus = Locked<(@Sendable () -> LiveStatus?)?>(nil)
        let faults = Locked<KafkaFaultInjector?>(nil)
        let cluster = embedded
        let firstStep = configuration.demoHistoryEvents.map { "generating demo history: 0 of \(grouped($0)) events" }
            ?? "first batch run over the logs in \(configuration.logDirectory)"
        let preparation = Preparation(health: health.handle(for: "run"), doing: firstStep, logger: logger) { stop in
            try prepareRun(configuration, bootstrapServers: bootstrapServers, embedded: cluster,
                           health: health, liveStatus: liveStatus, faults: faults, stop: stop, logger: logger)
        }

        var readerConfiguration = configuration.reader
        readerConfiguration.store = configuration.store
        readerConfiguration.clock = configuration.clock
        readerConfiguration.liveStatus = { liveStatus.value?() }
        readerConfiguration.health = health
        let server = try ReaderServer(configuration: readerConfiguration, logger: logger)
        let port = server.port
        let reader = ComponentService(health.handle(for: "reader"), component: server, logger: logger) { onListening?(port) }

        // Stopped in the reverse order: the reader first, then the preparation (which ends the
        // wait of the services it makes), then those, each after the one before.
        var names = ["consumer", "archiver", "scheduled batch"]
        if configuration.demoRate > 0 { names.append("demo traffic") }
        let services = preparation.services(named: names) + [preparation.service, reader]
        return Application(services: services, health: health, readerPort: port,
                           bootstrapServers: bootstrapServers, broker: embedded, claim: claim, logger: logger) {
            // Taken out: the injector holds the embedded broker, which stops once nothing does.
            guard let faults = faults.withLock({ faults in defer { faults = nil }; return faults }) else { return }
            faults.stop()
            let injected = faults.injectedByKind.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            logger.info("kafka faults injected", metadata: ["kafka.faults_injected": "\(injected.joined(separator: ","))"])
        }
    }
}

/// `run`'s preparation, on a thread of its own while the reader answers: the demo history, a
/// first batch run over what the logs hold, then the components, as services in the order of
/// `buildRun`'s names; reports each step to `/readyz` through the `run` component.
private func prepareRun(_ configuration: RunConfiguration, bootstrapServers: String, embedded: KafkaMockCluster?,
                        health: ComponentHealth, liveStatus: Locked<(@Sendable () -> LiveStatus?)?>,
                        faults: Locked<KafkaFaultInjector?>, stop: StopSignal, logger: Logger) throws -> [ComponentService] {
    let run = health.handle(for: "run")
    if let events = configuration.demoHistoryEvents {
        let total = grouped(events)
        try generateDemoHistory(events: events, into: configuration.logDirectory, clock: configuration.clock, logger: logger) { written in
            if stop.isRequested { throw PreparationStopped() }
            run.update(.starting(reason: "generating demo history: \(grouped(written)) of \(total) events"))
        }
    }
    if stop.isRequested { throw PreparationStopped() }
    let (services, live) = try runServices(configuration, bootstrapServers: bootstrapServers, embedded: embedded,
                                           health: health, stop: stop, logger: logger)
    liveStatus.set(live)
    if stop.isRequested { throw PreparationStopped() }
    faults.set(embedded.flatMap { startFaults(configuration, on: $0, logger: logger) })
    return services
}

/// Starts injecting `configuration.embeddedFaults` into the embedded broker, on the topic's
/// partitions and the coordinators of the realtime and archive groups; nil without faults.
private func startFaults(_ configuration: RunConfiguration, on cluster: KafkaMockCluster,
                         logger: Logger) -> KafkaFaultInjector? {
    guard let schedule = configuration.embeddedFaults else { return nil }
    let injector = KafkaFaultInjector(cluster: cluster, topic: configuration.topic, partitions: configuration.partitions,
                                      groups: [RealtimeConfiguration.defaultGroup, ArchiverConfiguration.defaultGroupID],
                                      logger: logger)
    injector.start(schedule)
    return injector
}

/// The components of `run` but the reader, as services in start order (consumer, archiver,
/// scheduled batch, demo traffic), after a first batch run over what the logs hold; and their
/// status for `/v1/status`.
private func runServices(_ configuration: RunConfiguration, bootstrapServers: String, embedded: KafkaMockCluster?,
                         health: ComponentHealth, stop: StopSignal,
                         logger: Logger) throws -> ([ComponentService], @Sendable () -> LiveStatus?) {
    let store = configuration.store
    let run = health.handle(for: "run")
    let batch = ScheduledBatch(logDirectory: configuration.logDirectory, store: store,
                               scratchDirectory: configuration.dataDirectory, interval: configuration.batchInterval, clock: configuration.clock,
                               health: health.handle(for: "scheduled batch"), logger: logger)
    // Not cut short by a stop: a batch run commits all its hours or none, and a stop waits for it.
    run.update(.starting(reason: "first batch run over the logs in \(configuration.logDirectory)"))
    batch.runOnce { progress in
        let files = "first batch run over the logs: \(grouped(progress.hours)) hours in \(grouped(progress.files)) files"
        // The last counts are written (and the run committed) after the last byte is read.
        let step = progress.bytesRead < progress.totalBytes
            ? "\(megabytes(progress.bytesRead)) of \(megabytes(progress.totalBytes)) MB read"
            : "all \(megabytes(progress.totalBytes)) MB read, writing the counts"
        run.update(.starting(reason: "\(files), \(step)"))
    }
    if stop.isRequested { throw PreparationStopped() }
    run.update(.starting(reason: "connecting the consumer and the archiver to \(bootstrapServers)"))

    var realtimeConfiguration = RealtimeConfiguration(bootstrapServers: bootstrapServers, store: store)
    realtimeConfiguration.topic = configuration.topic
    realtimeConfiguration.flushInterval = configuration.flushInterval
    realtimeConfiguration.sessionTimeoutMilliseconds = configuration.sessionTimeoutMilliseconds
    let consumerHealth = health.handle(for: "consumer")
    realtimeConfiguration.health = consumerHealth
    realtimeConfiguration.kafkaOptions = configuration.kafkaOptions
    realtimeConfiguration.clock = configuration.clock
    // The embedded broker starts empty: what the store kept of the topic is an earlier broker's.
    if embedded != nil { realtimeConfiguration.earlierBrokerOffsets = EarlierBrokerOffsets(topic: configuration.topic) }
    // The embedded broker holds an empty fetch for the whole wait even when events arrive.
    if embedded != nil { realtimeConfiguration.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds }
    // Each Kafka client keeps the embedded broker until it is destroyed itself.
    realtimeConfiguration.embeddedCluster = embedded
    let realtime = try RealtimeStart(configuration: realtimeConfiguration, logger: logger).service()

    var archiveConfiguration = ArchiverConfiguration(bootstrapServers: bootstrapServers, topic: configuration.topic,
                                                     logRoot: configuration.logDirectory)
    archiveConfiguration.allowedLateness = configuration.allowedLateness
    archiveConfiguration.clock = configuration.clock
    archiveConfiguration.consumer.options = configuration.kafkaOptions
    archiveConfiguration.consumer.healthReport = KafkaHealthReport(health: health, component: "archiver Kafka connection")
    if embedded != nil { archiveConfiguration.consumer.fetchWaitMaxMilliseconds = KafkaMockCluster.consumerFetchWaitMaxMilliseconds }
    archiveConfiguration.consumer.embeddedCluster = embedded
    let archiveSettings = archiveConfiguration
    let archivers = try ComponentSupply { try Archiver(configuration: archiveSettings, logger: logger) }

    let consumers = realtime.consumers
    let liveStatus: @Sendable () -> LiveStatus? = {
        guard let consumer = consumers.current, let archiver = archivers.current else { return nil }
        return LiveStatus(realtime: consumer.status(), archive: archiver.status())
    }

    // Started in this order, stopped in the reverse one (after the reader): the producer first,
    // then the scheduled batch, the archiver and the consumer, each after the one before.
    var services = [
        realtime.service,
        archivers.service(health.handle(for: "archiver"), logger: logger),
        ComponentService(batch.health, component: batch, logger: logger),
    ]
    if configuration.demoRate > 0 {
        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        producerConfiguration.clientID = "counterpoint-demo"
        producerConfiguration.options = configuration.kafkaOptions
        producerConfiguration.healthReport = KafkaHealthReport(health: health, component: "demo traffic Kafka connection")
        producerConfiguration.embeddedCluster = embedded
        // At demo rates only long batches stay few: the embedded broker's fetches slow down
        // with every batch it holds (see KafkaMockCluster).
        producerConfiguration.lingerMilliseconds = 200
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        var generator = DemoTraffic.defaultGenerator
        generator.clock = configuration.clock
        let traffic = DemoTraffic(producer: producer, topic: configuration.topic, rate: configuration.demoRate,
                                  generator: generator, logger: logger)
        services.append(ComponentService(health.handle(for: "demo traffic"), component: traffic, logger: logger))
    }
    return (services, liveStatus)
}

/// `bytes` in whole megabytes, rounded up, as `/readyz` shows them.
private func megabytes(_ bytes: Int64) -> String {
    grouped(Int((bytes + 999_999) / 1_000_000))
}

/// Claims `directory` for this run, or says which run holds it.
private func claimDataDirectory(_ directory: String) throws -> DirectoryLock {
    do {
        return try DirectoryLock(directory: directory, name: "run.lock")
    } catch DirectoryLockError.held {
        throw RunError.dataDirectoryInUse(directory)
    }
}

public enum RunError: Error, CustomStringConvertible {
    /// Another `run` on its embedded broker uses the data directory.
    case dataDirectoryInUse(String)

    public var description: String {
        switch self {
        case .dataDirectoryInUse(let directory):
            "another counterpoint run on its embedded broker is using the data directory \(directory) (its realtime offsets are that broker's); stop it, or give this run a --data-dir of its own"
        }
    }
}
