import CounterpointApp
import Foundation
import HTTPTestClient
import LogCapture
import Patience
import Scratch
import Testing

/// `run` listens before its long preparation (demo history, first batch run) has finished, and
/// says in `/readyz` what it waits for (issue 44, "Say why and stop").
@Suite("run while it prepares", .onTestThreads)
struct PreparationTests {
    /// `run` on its embedded broker with `events` of demo history and no live traffic.
    static func demoConfiguration(data: String, events: Int) throws -> RunConfiguration {
        var configuration = try BuilderTests.runConfiguration(data: data, partitions: 1)
        configuration.demoHistoryEvents = events
        configuration.demoRate = 0
        return configuration
    }

    /// `/readyz`'s answer: its status and the message of its error, if it has one.
    static func readiness(port: Int) throws -> (status: Int, message: String) {
        let answer = try getJSON("/readyz", port: port)
        return (answer.status, (answer.object["error"] as? [String: Any])?["message"] as? String ?? "")
    }

    @Test("run answers while it prepares: /healthz 200, /readyz 503 saying what it waits for, then 200 and the history's counts")
    func answersWhilePreparing() async throws {
        try await withTemporaryDirectory { directory in
            let events = 150_000
            let configuration = try Self.demoConfiguration(data: directory.appendingPathComponent("data").path, events: events)
            let application = try await buildRun(configuration, logger: quietLogger)
            let port = try #require(application.readerPort)

            // Listening as soon as it is built, before the preparation has begun.
            #expect(try getJSON("/healthz", port: port).status == 200)
            let before = try getJSON("/readyz", port: port)
            #expect(before.status == 503)
            let error = try #require(before.object["error"] as? [String: Any])
            #expect(error["code"] as? String == "component_not_running")
            #expect(error["message"] as? String == "run is starting: generating demo history: 0 of 150,000 events; reader is starting")
            let components = try #require(error["components"] as? [[String: Any]])
            #expect(components.first?["name"] as? String == "run" && components.first?["state"] as? String == "starting")
            #expect(components.first?["reason"] as? String == "generating demo history: 0 of 150,000 events")

            let started = ContinuousClock.now
            try await whileRunning([application]) {
                var said: [String] = []
                let ready = try await eventually(within: .seconds(120), every: .milliseconds(20)) {
                    let (status, message) = try Self.readiness(port: port)
                    if status == 503 {
                        if said.last != message { said.append(message) }
                        // The counts answer meanwhile, from the stores as they are.
                        #expect(try getJSON("/healthz", port: port).status == 200)
                        #expect(try getJSON("/v1/top?limit=1", port: port).status == 200)
                    }
                    return status == 200
                }
                #expect(ready, "\(said)")
                let took = ContinuousClock.now - started
                // What it waited for, in order: the history as it was written, then the first batch run.
                #expect(said.contains { $0.contains(/run is starting: generating demo history: [1-9][0-9,]* of 150,000 events/) }, "\(said)")
                #expect(said.contains { $0.contains("run is starting: first batch run over the logs") }, "\(said)")
                let history = said.firstIndex { $0.contains("generating demo history") } ?? said.endIndex
                let batch = said.firstIndex { $0.contains("first batch run") } ?? -1
                #expect(history < batch, "\(said)")
                print("run prepared \(events) events of demo history in \(took); /readyz said: \(said)")

                // Ready: the first batch run counted the whole history.
                let status = try getJSON("/v1/status", port: port).object
                let runs = try #require((status["batch"] as? [String: Any])?["runs"] as? [[String: Any]])
                let first = try #require(runs.last)
                let valid = try #require(first["valid"] as? Int), duplicates = try #require(first["duplicates"] as? Int)
                #expect(valid - duplicates == events, "\(first)")
                let top = try #require(getJSON("/v1/top?limit=1", port: port).object["tracks"] as? [[String: Any]])
                let track = try #require(top.first?["track_id"] as? Int), topPlays = try #require(top.first?["plays"] as? Int)
                #expect(topPlays > 0)
                #expect(try plays(of: Int64(track), port: port) == Int64(topPlays))
                let components = try #require(status["components"] as? [[String: Any]])
                #expect(components.allSatisfy { $0["state"] as? String == "running" }, "\(components)")
            }
        }
    }

    @Test("a stop while the demo history is written ends the run within seconds, leaving only whole hours behind")
    func stopWhilePreparing() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            let configuration = try Self.demoConfiguration(data: data, events: 1_000_000)
            let application = try await buildRun(configuration, logger: quietLogger)
            let port = try #require(application.readerPort)
            var stopAsked = ContinuousClock.now
            try await whileRunning([application]) {
                let writing = try await eventually(within: .seconds(60), every: .milliseconds(20)) {
                    try Self.readiness(port: port).message.contains(/generating demo history: [1-9]/)
                }
                #expect(writing)
                stopAsked = .now
            }
            // The stop cut the history short (fewer than its 48 hours, below) rather than waiting for it;
            // the bound is only against a hang: a loaded CI machine once took 15 s.
            let took = ContinuousClock.now - stopAsked
            #expect(took < .seconds(60), "\(took)")
            #expect(application.health.reports().first { $0.name == "run" }?.state == .stopped)
            // Every hour file written is whole, with its closed marker; the one being written was removed.
            let logs = URL(fileURLWithPath: configuration.logDirectory)
            let files = FileManager.default.enumerator(at: logs, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            let hours = files.filter { $0.pathExtension == "ndjson" }
            #expect(hours.count < 48, "\(hours.count)")
            for hour in hours {
                let marker = hour.deletingPathExtension().appendingPathExtension("closed")
                #expect(FileManager.default.fileExists(atPath: marker.path), "\(hour.lastPathComponent) has no closed marker")
            }
        }
    }

    @Test("a stop right after ready or during the preparation leaves no Kafka client to see the embedded broker go")
    func stopLogsNoBrokerGone() async throws {
        // The last references to the Kafka clients go with the threads and tasks that ran and
        // stopped them, a moment after the group's end; each client holds the broker, so that it
        // stops after them (when only the application held it, about one stop in five had a
        // client log "1/1 brokers are down" and its Kafka connection degraded).
        for attempt in 0..<6 {
            try await withTemporaryDirectory { directory in
                var configuration = try Self.demoConfiguration(data: directory.appendingPathComponent("data").path, events: 2_000)
                configuration.demoRate = 200
                let records = CapturingLogHandler.Records()
                let logger = CapturingLogHandler.logger("stop-tests", into: records)
                let application = try await buildRun(configuration, logger: logger)
                let port = try #require(application.readerPort)
                try await whileRunning([application]) {
                    if attempt % 2 == 0 {
                        let ready = try await eventually(within: .seconds(30), every: .milliseconds(10)) {
                            try Self.readiness(port: port).status == 200
                        }
                        #expect(ready)
                    }
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...400)))
                }
                let loud = records.value.filter { $0.level >= .warning }.map { "\($0.level) \($0.message) \($0.metadata)" }
                #expect(loud.isEmpty, "attempt \(attempt):\n\(loud.joined(separator: "\n"))")
                let states = application.health.reports().filter { ["degraded", "failed"].contains($0.state.name) }.map { "\($0.name): \($0.state)" }
                #expect(states.isEmpty, "attempt \(attempt): \(states)")
            }
        }
    }
}
