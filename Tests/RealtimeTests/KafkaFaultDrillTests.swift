import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Kafka
import Patience
import Programs
import Runtime
import Scratch
import Testing

/// The Kafka faults of docs/faults.md on librdkafka's mock cluster with three brokers: `consume`
/// and `archive` as processes while events flow, the faults injected from here. The suite runs
/// a short drill; `scripts/drill` (COUNTERPOINT_LONG_DRILL=1) the long one.
/// `scripts/test` runs this suite apart from the others, in a test process of its own: it takes
/// mock brokers down, and librdkafka aborts when a child spawned at that moment holds a listener.
@Suite("Kafka faults drilled on a three-broker mock cluster", .onTestThreads, .serialized)
struct KafkaFaultDrillTests {
    /// How much of everything: events, how fast they come, how long brokers stay down, how
    /// many requests fail.
    struct Plan {
        var events: Int
        /// Production spans every fault; the last `heldBack` events wait until the faults are over.
        var productionRate: Int
        var heldBack: Int
        var brokerDown: Duration
        var clusterDown: Duration
        /// Group errors cost a rebalance each, which takes the mock seconds: a few of each.
        var requestBursts: [(KafkaMockCluster.Request, Int)]
        var disconnects: Int
        var slowFetches: Int

        /// What the suite runs: every kind of fault, each once and briefly.
        static let short = Plan(events: 20_000, productionRate: 1_500, heldBack: 2_000, brokerDown: .seconds(2),
                                clusterDown: .seconds(3),
                                requestBursts: [(.fetch, 5), (.offsetCommit, 3), (.heartbeat, 1), (.joinGroup, 1), (.syncGroup, 1)],
                                disconnects: 2, slowFetches: 2)
        /// What `scripts/drill` runs.
        static let long = Plan(events: 120_000, productionRate: 4_000, heldBack: 10_000, brokerDown: .seconds(4),
                               clusterDown: .seconds(5),
                               requestBursts: [(.fetch, 20), (.offsetCommit, 10), (.heartbeat, 3), (.joinGroup, 2), (.syncGroup, 2)],
                               disconnects: 5, slowFetches: 5)

        static var chosen: Plan { Fixtures.isLongDrill ? .long : .short }
    }

    static let partitions = 12

    @Test("through a broker down, moved leaders and coordinators, request-error bursts, a SIGKILL and the whole cluster unreachable, the totals are exact, the archive complete and the health says when the cluster cannot be reached")
    func drill() async throws {
        let plan = Plan.chosen
        try await withTemporaryDirectory { directory in
            let cluster = try KafkaMockCluster(brokers: 3, logger: Fixtures.logger)
            try cluster.createTopic("plays", partitions: Self.partitions)
            let data = directory.appendingPathComponent("data")
            let archive = directory.appendingPathComponent("archive")
            let consumeArguments = ["consume", "--brokers", cluster.bootstrapServers, "--data-dir", data.path,
                                    "--flush-interval-ms", "100", "--session-timeout-ms", "6000"]
            var consume = try Executable.start(consumeArguments, scratch: directory)
            let archiver = try Executable.start(["archive", "--brokers", cluster.bootstrapServers, "--logs", archive.path,
                                                    "--commit-interval-ms", "200"], scratch: directory)
            var injected: [String: Int] = [:]
            do {
                let faultsOver = Locked(false)
                // On a thread of its own, not the cooperative pool: it blocks until the faults are
                // over, which the tasks of this test decide (see ConsumeProcessTests.crashRestarts).
                let production = Task {
                    try await BlockingThread.run(name: "producer") {
                        let produced = try ConsumeProcessTests.produceDuplicateFree(plan.events, to: cluster, rate: plan.productionRate,
                                                                                 holdingBackLast: plan.heldBack, idempotent: true,
                                                                                 until: { faultsOver.withLock { $0 } })
                        return (produced, ContinuousClock.now)
                    }
                }
                try await eventually(within: .seconds(60)) {
                    consume.stderr.contains("partitions assigned") && archiver.stderr.contains("partitions assigned")
                }

                // One broker down for a few seconds: the partitions it leads wait.
                try cluster.takeDown(broker: 2)
                injected["broker-down", default: 0] += 1
                try await Task.sleep(for: plan.brokerDown)
                try cluster.bringUp(broker: 2)

                // Every leader moves to the next broker, the coordinators move, and requests fail in bursts.
                for partition in 0..<Self.partitions {
                    try cluster.moveLeader(topic: "plays", partition: Int32(partition), to: (partition + 1) % 3 + 1)
                }
                injected["leaders-moved", default: 0] += Self.partitions
                try cluster.moveCoordinator(group: "counterpoint-realtime", to: 3)
                try cluster.moveCoordinator(group: "counterpoint-archive", to: 1)
                injected["coordinator-moved", default: 0] += 2
                for (request, count) in plan.requestBursts {
                    cluster.inject(errors: Array(repeating: .typical(for: request), count: count), on: request)
                    injected["errors:\(request.flagName)", default: 0] += count
                }
                cluster.inject(errors: Array(repeating: .disconnect, count: plan.disconnects), on: .fetch)
                injected["errors:fetch", default: 0] += plan.disconnects
                try cluster.delay(.fetch, on: 1, by: .milliseconds(400), count: plan.slowFetches)
                injected["slow:fetch", default: 0] += plan.slowFetches
                try await Task.sleep(for: .seconds(2))

                // The consumer dies mid-flow and a new one takes over from the stored offsets.
                consume.signal(SIGKILL)
                _ = try await consume.exit(within: .seconds(10))
                injected["SIGKILL", default: 0] += 1
                consume = try Executable.start(consumeArguments, scratch: directory)
                try await eventually(within: .seconds(60)) { consume.stderr.contains("partitions assigned") }

                // The whole cluster unreachable for seconds: both say so, then recover by themselves.
                let recoveredBefore = Self.recoveries(in: archiver.stderr)
                for broker in cluster.brokerIDs { try cluster.takeDown(broker: broker) }
                injected["cluster-down", default: 0] += 1
                let down = ContinuousClock.now
                try await eventually(within: .seconds(30)) {
                    Self.saysClusterUnreachable(consume.stderr) && Self.saysClusterUnreachable(archiver.stderr)
                }
                #expect(Self.saysClusterUnreachable(consume.stderr), "\(consume.stderr.suffix(3_000))")
                #expect(Self.saysClusterUnreachable(archiver.stderr), "\(archiver.stderr.suffix(3_000))")
                let sinceDown = ContinuousClock.now - down
                if sinceDown < plan.clusterDown { try await Task.sleep(for: plan.clusterDown - sinceDown) }
                for broker in cluster.brokerIDs { try cluster.bringUp(broker: broker) }
                let up = ContinuousClock.now
                try await eventually(within: .seconds(30)) {
                    Self.recoveries(in: consume.stderr) >= 1 && Self.recoveries(in: archiver.stderr) > recoveredBefore
                }
                let recovery = ContinuousClock.now - up
                #expect(Self.recoveries(in: consume.stderr) >= 1, "\(consume.stderr.suffix(3_000))")
                #expect(Self.recoveries(in: archiver.stderr) > recoveredBefore, "\(archiver.stderr.suffix(3_000))")
                faultsOver.withLock { $0 = true }

                let (produced, producedAt) = try await production.value
                // The truth is what the log holds, read back by a consumer of the test's own: the
                // mock does not check an idempotent producer's sequence numbers, so a batch lost
                // with a broker that went down can be acknowledged implicitly by the next one
                // (librdkafka's rule, right for a real broker), and missing from the log.
                let logged = try await Fixtures.loggedValues(cluster, partitions: Self.partitions)
                let truth = Self.counts(of: logged, keys: produced.keys)
                let distinct = Set(logged)
                let lost = produced.keys.count - distinct.count
                let location = StoreLocation(directory: data.path)
                try await eventually(within: .seconds(120), every: .milliseconds(500)) {
                    try StoreContents.read(.sqlite(location)).storedMessages >= logged.count || !consume.isRunning
                }
                // Freshness at the end: from the last event produced until the store holds every one.
                let caughtUp = ContinuousClock.now - producedAt
                let offsetsAtEnd = try Fixtures.highWatermarks(cluster, partitions: Self.partitions)
                try await eventually(within: .seconds(60), every: .milliseconds(500)) {
                    (try? ArchiveContents.read(archive).distinctEvents) ?? 0 >= distinct.count
                }
                for process in [consume, archiver] {
                    process.signal(SIGTERM)
                    let exit = try await process.exit(within: .seconds(20))
                    #expect(exit?.exited == true && exit?.status == 0, "\(process.arguments[0]): \(process.stderr.suffix(2_000))")
                }

                let contents = try StoreContents.read(.sqlite(location))
                #expect(truth.unknown == 0, "\(truth.unknown) messages in the log were never produced")
                #expect(lost * 20 <= plan.events, "the mock dropped \(lost) of \(plan.events) acknowledged events")
                #expect(contents.offsets == offsetsAtEnd)
                #expect(contents.storedMessages == logged.count)
                let realtimeMismatch = mismatch(contents.counts, truth.counts)
                #expect(realtimeMismatch == nil)
                let archived = try ArchiveContents.read(archive)
                #expect(archived.distinctEvents == distinct.count)
                let archiveMismatch = mismatch(archived.counts, Self.counts(of: Array(distinct), keys: produced.keys).counts)
                #expect(archiveMismatch == nil)
                print("kafka fault drill: \(plan.events) events, \(logged.count) in the log (\(lost) acknowledged, then dropped by the mock); "
                      + "faults \(injected.sorted { $0.key < $1.key }); "
                      + "mismatched keys realtime \(realtimeMismatch ?? "0"), archive \(archiveMismatch ?? "0"); "
                      + "archived \(archived.lines) lines for \(archived.distinctEvents) events; "
                      + "health recovered \(recovery) after the cluster came back; "
                      + "every event stored \(caughtUp) after the last was produced")
            } catch {
                await consume.killIfRunning()
                await archiver.killIfRunning()
                throw error
            }
            await consume.killIfRunning()
            await archiver.killIfRunning()
        }
    }

    /// The health board logged the Kafka connection degraded because no broker answers.
    /// What `values` add up to per (track, hour), by the key each produced line had; `unknown`
    /// counts values that were never produced.
    static func counts(of values: [[UInt8]], keys: [[UInt8]: CountKey]) -> (counts: [CountKey: Int64], unknown: Int) {
        var counts: [CountKey: Int64] = [:]
        var unknown = 0
        for value in values {
            guard let key = keys[value] else {
                unknown += 1
                continue
            }
            counts[key, default: 0] += 1
        }
        return (counts, unknown)
    }

    static func saysClusterUnreachable(_ log: String) -> Bool {
        log.split(separator: "\n").contains { $0.contains("component degraded") && $0.contains("Kafka connection") && $0.contains("brokers are down") }
    }

    /// Lines in which the Kafka connection's health came back.
    static func recoveries(in log: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("component recovered") && $0.contains("Kafka connection") }.count
    }
}

/// What an archive holds, read straight from its files: every event once by its id
/// (at-least-once delivery may have written some twice).
struct ArchiveContents {
    var counts: [CountKey: Int64] = [:]
    var distinctEvents: Int { seen.count }
    var lines = 0
    private var seen = Set<EventID>()

    static func read(_ root: URL) throws -> ArchiveContents {
        var contents = ArchiveContents()
        let files = (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? [])
            .filter { $0.lastPathComponent.hasSuffix(".ndjson") || $0.lastPathComponent.hasSuffix(".ndjson.gz") }
        for file in files {
            try LogReader(path: file.path).forEachChunk { chunk, _ in
                for line in chunk.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                    guard case .success(let event) = EventParser.parse(UnsafeRawBufferPointer(rebasing: line)) else { continue }
                    contents.lines += 1
                    if contents.seen.insert(event.eventID).inserted {
                        contents.counts[CountKey(trackID: event.trackID, hour: event.hour.index), default: 0] += 1
                    }
                }
            }
        }
        return contents
    }
}
