import CounterpointCore
import CounterStore
import Foundation
import Generator
import Kafka
import KafkaTestSupport
import Patience
import PostgresDB
import PostgresTestServer
import Programs
import Realtime
import Runtime
import SQLiteDB
import Scratch
import Testing

/// Ingest speed and memory of the realtime layer; off unless asked for:
/// `COUNTERPOINT_BENCHMARKS=1 swift test -c release -Xswiftc -enable-testing --filter IngestBenchmark`
/// (`COUNTERPOINT_BENCHMARK_EVENTS`, `_ROUNDS`, `_STORES=sqlite,postgres`, `_FLUSH_MS` and `_KAFKA` vary it).
/// The figures depend on the machine and its load: the mock broker, librdkafka's threads,
/// the polling thread and the store thread share the same cores.
@Suite("Realtime ingest benchmark", .onTestThreads, .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARKS"] != nil, "set COUNTERPOINT_BENCHMARKS=1 to run"))
struct IngestBenchmark {
    static let events = Int(ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARK_EVENTS"] ?? "") ?? 1_000_000
    /// Enough partitions that the mock's retention (about 5 MiB each, some 20,000 events of
    /// 200 B) deletes nothing.
    static let partitions = max(64, events / 15_000)
    /// Rounds of SQLite then PostgreSQL ingest (`COUNTERPOINT_BENCHMARK_ROUNDS`, default 3).
    static let rounds = max(1, Int(ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARK_ROUNDS"] ?? "") ?? 3)


    /// Which stores the ingest rounds write (`COUNTERPOINT_BENCHMARK_STORES`, default "sqlite,postgres").
    static let stores = (ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARK_STORES"] ?? "sqlite,postgres")
        .split(separator: ",").map(String.init)

    @Test("ingest into committed counts on SQLite and on PostgreSQL versus a bare librdkafka loop that only counts, over the same pre-loaded events")
    func ingestVersusBareLoop() async throws {
        try await withTemporaryDirectory { directory in
            let cluster = try Fixtures.cluster(partitions: Self.partitions)
            try Self.produceEvents(to: cluster) { producer, key, line in
                try producer.send(topic: "plays", key: key, value: line)
            }
            let expected = Self.events

            // Each round reads the same events from the start once per path (a group and a store
            // of its own each time), the bare loop included, in an order that alternates between
            // rounds so that the machine's load falls on every path alike; each ratio is to the
            // bare loop of the same round.
            let server = Self.stores.contains("postgres") ? try PostgresTestServer.shared() : nil
            var ratios: [String: [Double]] = [:]
            for round in 1...Self.rounds {
                let location = StoreLocation(directory: directory.appendingPathComponent("round-\(round)").path)
                let postgresURL = try server?.makeDatabase()
                defer { if let postgresURL { server?.dropDatabase(url: postgresURL) } }
                var runs: [String: IngestRun] = [:]
                let paths = ["bare"] + Self.stores
                for path in round % 2 == 1 ? paths : paths.reversed() {
                    switch path {
                    case "bare": runs[path] = try await Self.bareLoop(cluster, group: "bench-bare-\(round)")
                    case "sqlite": runs[path] = try await Self.ingest(cluster, into: .sqlite(location), group: "bench-sqlite-\(round)")
                    case "postgres": runs[path] = try await Self.ingest(cluster, into: .postgres(url: try #require(postgresURL)), group: "bench-postgres-\(round)")
                    default: Issue.record("unknown store \(path) in COUNTERPOINT_BENCHMARK_STORES (sqlite, postgres)")
                    }
                }
                let bare = try #require(runs["bare"])
                let bareRate = Double(expected) / bare.duration.timeInterval
                print("round \(round): bare librdkafka loop: \(expected) events in \(bare.duration): \(Int(bareRate)) events/s; "
                      + bare.use.summary(events: expected))
                for (path, name) in [("sqlite", "SQLite"), ("postgres", "PostgreSQL")] {
                    guard let run = runs[path] else { continue }
                    let rate = Double(expected) / run.duration.timeInterval
                    ratios[name, default: []].append(rate / bareRate)
                    print("""
                        round \(round): realtime ingest into committed counts on \(name): \(expected) events in \(run.duration): \
                        \(Int(rate)) events/s = \(String(format: "%.2f", rate / bareRate)) of the bare loop (all read after \
                        \(run.consumedAll)); last flush \(run.lastFlush); \(run.use.summary(events: expected))
                        """)
                }
                if runs["sqlite"] != nil {
                    let sqliteRows = try StoreContents.read(.sqlite(location))
                    #expect(sqliteRows.counts.values.reduce(0, +) == Int64(expected))
                    let bytes = try Self.bytesInUse(location)
                    print("round \(round): realtime.sqlite \(bytes) bytes in use = \(bytes / max(1, sqliteRows.counts.count)) per (track, hour) row")
                }
                if runs["postgres"] != nil, let postgresURL {
                    let postgresTotal = try PostgresConnection(url: postgresURL).query("SELECT sum(plays)::bigint FROM realtime_counts").singleInt64
                    #expect(postgresTotal == Int64(expected))
                }
            }
            for name in ["SQLite", "PostgreSQL"] {
                guard let values = ratios[name] else { continue }
                print("realtime ingest into \(name) ÷ the bare loop over \(values.count) rounds: "
                      + values.map { String(format: "%.2f", $0) }.joined(separator: ", ")
                      + "; median \(String(format: "%.2f", values.sorted()[values.count / 2]))")
            }
        }
    }

    @Test("the polling thread's work alone, without Kafka or a store: parsing, and parsing then counting into the flush's tables")
    func parsingAndCountingAlone() throws {
        var configuration = GeneratorConfiguration()
        configuration.events = Self.events
        configuration.start = Hour(epochSeconds: 1_795_000_000)
        var synthesizer = EventSynthesizer(configuration: configuration)
        var bytes: [UInt8] = []
        var ends: [Int] = []
        var truth = HourCounts()
        while let event = synthesizer.appendNext(to: &bytes) {
            ends.append(bytes.count)
            truth.add(id: event.trackID, hour: event.hour)
        }
        let events = ends.count
        print("\(events) events, \(bytes.count / events) bytes each on average")

        /// This thread's CPU time, in nanoseconds: unlike the wall clock, it leaves out the time
        /// the thread waited for a core on this shared machine.
        func threadCPUNanoseconds() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
        }
        /// CPU nanoseconds an event for `body` over every event's bytes.
        func nanosecondsPerEvent(_ body: (UnsafeRawBufferPointer) -> Void) -> Double {
            let start = threadCPUNanoseconds()
            bytes.withUnsafeBytes { all in
                var from = 0
                for end in ends {
                    body(UnsafeRawBufferPointer(rebasing: all[from..<end]))
                    from = end
                }
            }
            return (threadCPUNanoseconds() - start) / Double(events)
        }

        var parsing: [Double] = [], counting: [Double] = []
        for round in 1...Self.rounds {
            var dimensions = PlayDimensions()
            var valid = 0
            parsing.append(nanosecondsPerEvent { event in
                if case .success = EventParser.parse(event, dimensions: &dimensions) { valid += 1 }
            })
            #expect(valid == events)
            var counts = HourCounts(minimumCapacity: 1 << 16)
            var dimensionCounts = DimensionCounts(minimumCapacity: 1 << 16)
            var listeners = ListenerCounts(minimumCapacity: 1 << 16)
            counting.append(nanosecondsPerEvent { event in
                guard case .success(let play) = EventParser.parse(event, dimensions: &dimensions) else { return }
                counts.add(id: play.trackID, hour: play.hour)
                dimensionCounts.add(id: play.trackID, hour: play.hour, dimensions)
                listeners.add(id: play.trackID, hour: play.hour, listenerID: dimensions.listenerID)
            })
            #expect(counts.count == truth.count && counts.totalPlays == truth.totalPlays)
            print(String(format: "round %d: parsing %.0f ns of CPU an event; parsing and counting %.0f ns (%d (track, hour) keys)",
                         round, parsing.last!, counting.last!, counts.count))
        }
        print(String(format: "median over %d rounds: parsing %.0f ns of CPU an event, parsing and counting %.0f ns",
                     Self.rounds, parsing.sorted()[parsing.count / 2], counting.sorted()[counting.count / 2]))
    }

    /// A bare librdkafka loop of `group` that only counts the messages, from offset 0 of every
    /// partition (explicit start offsets, as the realtime consumer hands them back), until it has
    /// seen them all: from its first message to its last.
    static func bareLoop(_ cluster: KafkaMockCluster, group: String) async throws -> IngestRun {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupID: group, topics: ["plays"])
        configuration.sessionTimeoutMilliseconds = 6_000
        configuration.heartbeatIntervalMilliseconds = 500
        let consumer = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        var starts: [KafkaPartition: Int64] = [:]
        for id in Int32(0)..<Int32(Self.partitions) {
            let watermarks = try consumer.queryWatermarks(topic: "plays", partition: id)
            try #require(watermarks.low ?? 0 == 0, "the mock's retention deleted events")
            starts[KafkaPartition(topic: "plays", id: id)] = 0
        }
        let handler = CountingHandler(starts: starts)
        let expected = Self.events
        // The process's CPU from the first message on (when the loop first sees one) to the last.
        let cpuAtFirst = Locked<Duration?>(nil)
        try await Self.run(consumer, handler: handler, until: {
            if handler.count > 0 { cpuAtFirst.withLock { $0 = $0 ?? CPUUse.processCPU() } }
            return handler.count >= expected
        })
        let duration = try #require(handler.last) - #require(handler.first)
        let use = CPUUse(cpu: CPUUse.processCPU() - (try #require(cpuAtFirst.withLock { $0 })), wall: duration)
        return IngestRun(duration: duration, consumedAll: duration, lastFlush: "none", use: use)
    }

    @Test("ingest into committed counts on SQLite with listener sketches versus the same events without listener_id")
    func ingestWithAndWithoutListeners() async throws {
        try await withTemporaryDirectory { directory in
            let cluster = try Fixtures.cluster(topic: "plays", partitions: Self.partitions)
            try cluster.createTopic("plays-without-listeners", partitions: Self.partitions)
            let field = Array(#""listener_id":"#.utf8)
            try Self.produceEvents(to: cluster, copies: 2) { producer, key, line in
                try producer.send(topic: "plays", key: key, value: line)
                // The same event without `"listener_id":N,`.
                var bare = line
                if let start = bare.firstRange(of: field)?.lowerBound, let comma = bare[start...].firstIndex(of: UInt8(ascii: ",")) {
                    bare.removeSubrange(start...comma)
                }
                try producer.send(topic: "plays-without-listeners", key: key, value: bare)
            }
            try await Self.compare(cluster, "plays", over: "plays-without-listeners", in: directory, what: "ingest with / without listener sketches",
                                   target: "≥ 0.9") { round in
                let listeners = try Self.listenerTotal(StoreLocation(directory: directory.appendingPathComponent("round-\(round)-plays").path))
                #expect(listeners > 0)
            }
        }
    }

    @Test("ingest into committed counts on SQLite of the full signal mix (97 % naming a creator, 9 % other signals) versus as many plays-only events")
    func ingestOfTheFullMix() async throws {
        try await withTemporaryDirectory { directory in
            let cluster = try Fixtures.cluster(topic: "plays-only", partitions: Self.partitions)
            try cluster.createTopic("full-mix", partitions: Self.partitions)
            // Today's plays: no creator_id, no other type.
            try Self.produceEvents(to: cluster, configure: { $0.signalShare = 0; $0.creators = 0 }) { producer, key, line in
                try producer.send(topic: "plays-only", key: key, value: line)
            }
            try Self.produceEvents(to: cluster, configure: { $0.signalShare = SignalMix.realisticShare }) { producer, key, line in
                try producer.send(topic: "full-mix", key: key, value: line)
            }
            try await Self.compare(cluster, "full-mix", over: "plays-only", in: directory, what: "ingest of the full mix / plays only",
                                   target: "≥ 0.8") { round in
                let location = StoreLocation(directory: directory.appendingPathComponent("round-\(round)-full-mix").path)
                let likes = try Database(path: location.realtimePath, mode: .readOnly)
                    .makeStatement("SELECT count(*) FROM realtime_counts WHERE likes <> 0").singleInt64() ?? 0
                #expect(likes > 0, "the other signals were counted")
            }
        }
    }

    /// Ingests `first`'s and `second`'s events into fresh SQLite stores (`round-N-<topic>` under
    /// `directory`), alternating which goes first every round, and prints each round's rates and
    /// the ratio first ÷ second, then their median and range; `check` looks at each round's stores.
    static func compare(_ cluster: KafkaMockCluster, _ first: String, over second: String, in directory: URL, what: String,
                        target: String, check: (Int) throws -> Void) async throws {
        var ratios: [Double] = []
        for round in 1...Self.rounds {
            var rates: [String: Double] = [:]
            for topic in round % 2 == 1 ? [first, second] : [second, first] {
                let location = StoreLocation(directory: directory.appendingPathComponent("round-\(round)-\(topic)").path)
                let run = try await Self.ingest(cluster, into: .sqlite(location), group: "bench-\(topic)-\(round)", topic: topic)
                rates[topic] = Double(Self.events) / run.duration.timeInterval
                print("round \(round): \(topic): \(Self.events) events into committed counts in \(run.duration): \(Int(rates[topic]!)) events/s; last flush \(run.lastFlush)")
            }
            try check(round)
            ratios.append(rates[first]! / rates[second]!)
            print("round \(round): \(what): \(String(format: "%.2f", ratios.last!))")
        }
        print("\(what) over \(ratios.count) rounds: median \(String(format: "%.2f", ratios.sorted()[ratios.count / 2])), "
              + "range \(String(format: "%.2f", ratios.min()!))–\(String(format: "%.2f", ratios.max()!)) (target \(target))")
    }

    /// Produces `events` synthetic events through `send` (given the producer, a distinct key per
    /// event and the line) and waits until all `copies` × `events` messages are delivered.
    static func produceEvents(to cluster: KafkaMockCluster, copies: Int = 1, configure: (inout GeneratorConfiguration) -> Void = { _ in },
                              _ send: (KafkaProducer, [UInt8], [UInt8]) throws -> Void) throws {
        var configuration = GeneratorConfiguration()
        configuration.events = Self.events
        configuration.start = Hour(epochSeconds: 1_795_000_000)
        configure(&configuration)
        var synthesizer = EventSynthesizer(configuration: configuration)
        let producer = try Fixtures.producer(cluster)
        var line: [UInt8] = []
        var sequence = 0
        while true {
            line.removeAll(keepingCapacity: true)
            guard synthesizer.appendNext(to: &line) != nil else { break }
            // A distinct key per event spreads them evenly (without one, librdkafka sticks to
            // a partition for 10 ms at a time).
            sequence += 1
            try send(producer, Array(String(sequence).utf8), line)
        }
        try producer.flush(timeout: .seconds(300))
        try #require(producer.deliveryStatistics.delivered == copies * Self.events)
    }

    /// The pages of realtime.sqlite that hold data (its WAL's included, free pages not), in bytes.
    static func bytesInUse(_ location: StoreLocation) throws -> Int {
        let database = try Database(path: location.realtimePath, mode: .readOnly)
        let pages = try ["page_count", "freelist_count", "page_size"].map { try database.makeStatement("PRAGMA \($0)").singleInt64() ?? 0 }
        return Int((pages[0] - pages[1]) * pages[2])
    }

    /// Σ listener plays in the realtime store: the sketches were written.
    static func listenerTotal(_ location: StoreLocation) throws -> Int64 {
        try Database(path: location.realtimePath, mode: .readOnly).makeStatement("SELECT coalesce(sum(listener_plays), 0) FROM realtime_counts").singleInt64() ?? 0
    }

    struct IngestRun {
        var duration: Duration
        var consumedAll: Duration
        var lastFlush: String
        var use: CPUUse
    }

    /// The CPU this test process used (user + system, every thread: the mock broker's, librdkafka's,
    /// the consumer's and its store's) from the first message to the last one counted: how much
    /// of the two cores a path takes.
    struct CPUUse {
        var cpu: Duration
        var wall: Duration

        static func processCPU() -> Duration {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            func duration(_ time: timeval) -> Duration { .seconds(time.tv_sec) + .microseconds(time.tv_usec) }
            return duration(usage.ru_utime) + duration(usage.ru_stime)
        }

        func summary(events: Int) -> String {
            String(format: "process CPU %.2f s over those %.2f s (%.2f cores, %.2f µs an event)",
                   cpu.timeInterval, wall.timeInterval, cpu.timeInterval / wall.timeInterval, cpu.timeInterval * 1e6 / Double(events))
        }
    }

    /// Runs a realtime consumer of `group` into `store` until its flushes have committed every
    /// event of the topic.
    static func ingest(_ cluster: KafkaMockCluster, into store: StoreBackend, group: String, topic: String = "plays") async throws -> IngestRun {
        var realtime = RealtimeConfiguration(bootstrapServers: cluster.bootstrapServers, store: store)
        realtime.topic = topic
        realtime.sessionTimeoutMilliseconds = 6_000
        realtime.heartbeatIntervalMilliseconds = 500
        realtime.flushInterval = .milliseconds(Int(ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARK_FLUSH_MS"] ?? "") ?? 250)
        realtime.group = group
        // librdkafka properties to try (`COUNTERPOINT_BENCHMARK_KAFKA="name=value,name=value"`).
        for option in (ProcessInfo.processInfo.environment["COUNTERPOINT_BENCHMARK_KAFKA"] ?? "").split(separator: ",") {
            try realtime.kafkaOptions.add(argument: String(option), describedAs: "COUNTERPOINT_BENCHMARK_KAFKA")
        }
        let consumer = try RealtimeConsumer(configuration: realtime, logger: Fixtures.logger)
        try consumer.start()
        let expected = events
        // Watched from a plain thread that sleeps between looks: a task's sleep wakes the
        // dispatch timer thread and the test executor as well, CPU the ingest side would pay
        // and the bare loop (which checks inline) would not.
        let (first, cpuAtFirst, committed, consumedAll) = try await BlockingThread.run(name: "bench-watch") {
            let reader = try store.openReader()
            var first: ContinuousClock.Instant?
            var cpuAtFirst = Duration.zero
            var committed: ContinuousClock.Instant?
            var consumedAll: ContinuousClock.Instant?
            let deadline = ContinuousClock.now + .seconds(300)
            while committed == nil, ContinuousClock.now < deadline {
                let consumed = consumer.status().eventsConsumed
                if first == nil, consumed > 0 { (first, cpuAtFirst) = (.now, CPUUse.processCPU()) }
                if consumedAll == nil, consumed >= expected { consumedAll = .now }
                // The store is asked only once every event is read, so that the watching takes no
                // CPU from the path while it reads.
                if consumedAll != nil, try reader.partitions().reduce(0, { $0 + $1.nextOffset }) >= Int64(expected) { committed = .now }
                BlockingThread.sleep(for: .milliseconds(2))
            }
            return (first, cpuAtFirst, committed, consumedAll)
        }
        let cpu = CPUUse.processCPU() - cpuAtFirst
        let status = consumer.status()
        try consumer.stop()
        let start = try #require(first)
        let use = CPUUse(cpu: cpu, wall: try #require(committed) - start)
        return IngestRun(duration: try #require(committed) - start, consumedAll: (consumedAll ?? .now) - start,
                         lastFlush: status.lastFlush.map { "\($0.rows) rows in \($0.duration)" } ?? "none", use: use)
    }

    @Test("resident memory of consume holding a million distinct tracks before one flush")
    func memoryWithMillionTracks() async throws {
        let binary = Executable.path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build the counterpoint executable first")
        try await withTemporaryDirectory { directory in
            let cluster = try Fixtures.cluster(partitions: Self.partitions)
            let producer = try Fixtures.producer(cluster)
            let tracks = Self.events
            for track in 1...tracks {
                let value = Array(#"{"event_id":"m\#(track)","type":"play","track_id":\#(track),"occurred_at":1795000000000}"#.utf8)
                try producer.send(topic: "plays", key: Array(String(track).utf8), value: value)
            }
            try producer.flush(timeout: .seconds(300))
            let dataDirectory = directory.appendingPathComponent("data").path
            let location = StoreLocation(directory: dataDirectory)
            // The first flush comes 15 s after start: joining and consuming take far less, so
            // every track is in memory at once, and then in one flush.
            let process = try Executable.start(
                ["consume", "--brokers", cluster.bootstrapServers, "--data-dir", dataDirectory, "--flush-interval-ms", "15000"],
                scratch: directory)
            let deadline = ContinuousClock.now + .seconds(300)
            var (peak, anonymous) = (0, 0)
            func sample() {
                guard let memory = process.memoryKilobytes else { return }
                (peak, anonymous) = (max(peak, memory.peak), max(anonymous, memory.anonymous))
            }
            while ContinuousClock.now < deadline, process.isRunning, try Self.storedOffsetTotal(location) < Int64(tracks) {
                sample()
                try await Task.sleep(for: .milliseconds(100))
            }
            sample()
            process.signal(SIGTERM)
            let exit = try await process.exit(within: .seconds(60))
            await process.killIfRunning()
            #expect(exit?.status == 0)
            let contents = try StoreContents.read(.sqlite(location))
            #expect(contents.counts.count == tracks)

            print("""
                consume holding \(contents.counts.count) distinct (track, hour) keys before its first flush, then flushing them: \
                peak resident memory (VmHWM) \(peak / 1024) MiB; anonymous memory at most \(anonymous / 1024) MiB \
                in samples every 100 ms (the rest is realtime.sqlite's pages, memory-mapped)
                """)
        }
    }

    static func storedOffsetTotal(_ location: StoreLocation) throws -> Int64 {
        guard FileManager.default.fileExists(atPath: location.realtimePath) else { return 0 }
        let database = try Database(path: location.realtimePath, mode: .readOnly)
        return try database.makeStatement("SELECT coalesce(sum(next_offset), 0) FROM partition_offsets").singleInt64() ?? 0
    }

    static func run(_ consumer: KafkaConsumer, handler: some KafkaConsumerHandler & Sendable, until done: @escaping @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        try await BlockingThread.run(name: "bench-consume") {
            try consumer.run(until: { done() || ContinuousClock.now >= deadline }, handler: handler)
        }
    }
}
