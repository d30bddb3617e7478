import Foundation
import Kafka
import Patience
import Programs
import Scratch
import Testing

/// `counterpoint replay` as a process, against a mock cluster hosted in the test process.
@Suite("The replay command", .onTestThreads)
struct ReplayCommandTests {
    @Test("replay --json produces every line of the logs and prints one JSON summary")
    func replaysLogs() async throws {
        try await withTemporaryDirectory { directory in
            let logs = directory.appendingPathComponent("logs")
            try Fixtures.generate(into: logs, events: 2_000, malformed: 0.01)
            let lines = try Fixtures.eventLines(under: [logs.path])
            let cluster = try Fixtures.cluster(topic: "load", partitions: 3)

            let command = try Executable.start(
                ["replay", "--brokers", cluster.bootstrapServers, "--logs", logs.path, "--topic", "load", "--json"], scratch: directory)
            let status = try await command.waitForExit()
            #expect(status == 0, "stderr: \(command.stderr)")
            #expect(command.stdout.split(separator: "\n").count == 1)
            let summary = try #require(command.jsonObject, "stdout: \(command.stdout)")
            #expect(summary["events"] as? Int == lines.count)
            #expect(summary["delivered"] as? Int == lines.count)
            #expect(summary["delivery_errors"] as? Int == 0)
            #expect(summary["topic"] as? String == "load")
            #expect(summary["stop_reason"] as? String == "end_of_logs")
            #expect(summary["unkeyed_events"] as? Int == lines.filter { trackID(of: $0) == nil }.count)

            let received = try await Fixtures.consume(lines.count, from: cluster, topic: "load", partitions: 3)
            #expect(received.count == lines.count)
        }
    }

    @Test("SIGINT stops a looping paced replay, which flushes and reports what it sent")
    func interrupted() async throws {
        try await withTemporaryDirectory { directory in
            let logs = directory.appendingPathComponent("logs")
            try Fixtures.generate(into: logs, events: 200)
            let cluster = try Fixtures.cluster(partitions: 2)

            let command = try Executable.start(
                ["replay", "--brokers", cluster.bootstrapServers, "--logs", logs.path, "--loop", "--rate", "2000", "--json"],
                scratch: directory)
            #expect(try await command.waitForStderr(containing: "replay starting"))
            try await Task.sleep(for: .milliseconds(300))
            command.signal(SIGINT)
            let status = try await command.waitForExit()
            #expect(status == 0, "stderr: \(command.stderr)")
            let summary = try #require(command.jsonObject, "stdout: \(command.stdout)")
            #expect(summary["stop_reason"] as? String == "stopped")
            let events = try #require(summary["events"] as? Int)
            #expect(events > 0)
            #expect(summary["delivered"] as? Int == events)
            #expect(summary["target_rate"] as? Double == 2_000)
        }
    }

    @Test("an unreachable broker is a one-line error and a non-zero exit")
    func unreachableBroker() async throws {
        try await withTemporaryDirectory { directory in
            let logs = directory.appendingPathComponent("logs")
            try Fixtures.generate(into: logs, events: 10)
            let command = try Executable.start(
                ["replay", "--brokers", "127.0.0.1:1", "--logs", logs.path, "--connect-timeout", "1"], scratch: directory)
            let status = try await command.waitForExit()
            #expect(status != 0)
            #expect(command.stdout.isEmpty)
            let messages = command.stderrMessages
            #expect(messages.count == 1, "stderr: \(command.stderr)")
            #expect(messages.first?.hasPrefix("counterpoint: replay: no Kafka broker reachable at 127.0.0.1:1") == true, "\(messages)")
        }
    }

    @Test("logs that hold no events files are a one-line error and a non-zero exit")
    func noLogs() async throws {
        try await withTemporaryDirectory { directory in
            let empty = directory.appendingPathComponent("empty")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
            let command = try Executable.start(["replay", "--brokers", "127.0.0.1:1", "--logs", empty.path], scratch: directory)
            let status = try await command.waitForExit()
            #expect(status != 0)
            #expect(command.stderrMessages == ["counterpoint: replay: no event logs found in \(empty.path)"])
        }
    }
}
