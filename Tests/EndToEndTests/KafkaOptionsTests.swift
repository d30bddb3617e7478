import Foundation
import Patience
import Programs
import Scratch
import Testing

extension RunEndToEnd {
    /// `--kafka-option` and `--kafka-config` reach librdkafka, which judges them at start.
    @Suite("Kafka options from the command line")
    struct KafkaOptionsTests {
        @Test("TLS against the embedded plaintext broker fails run at start: one line saying the handshake failed")
        func tlsAgainstEmbeddedBroker() async throws {
            try await withTemporaryDirectory { scratch in
                let result = try await runCounterpoint([
                    "run", "--data-dir", scratch.appendingPathComponent("data").path, "--listen", "127.0.0.1:0",
                    "--partitions", "1", "--kafka-option", "security.protocol=ssl",
                ], scratch: scratch, timeout: .seconds(60))
                #expect(result.status != 0, "\(result.summary)")
                #expect(result.stderrMessages.count == 1, "\(result.summary)")
                let message = result.stderrMessages.first ?? ""
                #expect(message.contains("refused the connection") && message.contains("SSL handshake failed"), "\(result.summary)")
                // And the log said it as it happened.
                #expect(result.stderr.split(separator: "\n").contains { RunningProgram.isLogLine(String($0)) && $0.contains("SSL handshake failed") })
            }
        }

        @Test("an unknown property or an invalid value fails at start with librdkafka's message, on one line")
        func rejectedProperties() async throws {
            try await withTemporaryDirectory { scratch in
                let config = scratch.appendingPathComponent("kafka.conf")
                try "# tuning\nfetch.wait.max.ms = soon\n".write(to: config, atomically: true, encoding: .utf8)
                let log = scratch.appendingPathComponent("plays.ndjson")
                try "{}\n".write(to: log, atomically: true, encoding: .utf8)
                let attempts: [([String], String)] = [
                    (["consume", "--brokers", "127.0.0.1:1", "--kafka-option", "no.such.property=1"],
                     "No such configuration property: \"no.such.property\""),
                    (["archive", "--brokers", "127.0.0.1:1", "--logs", scratch.path, "--kafka-config", config.path],
                     "Invalid value for configuration property \"fetch.wait.max.ms\""),
                    (["replay", "--brokers", "127.0.0.1:1", "--logs", log.path, "--kafka-option", "acks=most"],
                     "Invalid value for configuration property \"request.required.acks\""),
                    (["run", "--data-dir", scratch.appendingPathComponent("data").path, "--partitions", "1",
                      "--listen", "127.0.0.1:0", "--kafka-option", "no.such.property=1"],
                     "No such configuration property: \"no.such.property\""),
                    (["consume", "--brokers", "127.0.0.1:1", "--kafka-config", config.path + ".missing"], "cannot read"),
                    // Properties the guarantees rest on, as a file written for another client may set them.
                    (["run", "--data-dir", scratch.appendingPathComponent("data").path, "--partitions", "1",
                      "--listen", "127.0.0.1:0", "--kafka-option", "group.id=dashboards"], "group.id must stay"),
                    (["archive", "--brokers", "127.0.0.1:1", "--logs", scratch.path, "--kafka-option", "enable.auto.commit=true"],
                     "enable.auto.commit must stay false: counterpoint commits offsets itself"),
                ]
                for (arguments, expected) in attempts {
                    let result = try await runCounterpoint(arguments, scratch: scratch, timeout: .seconds(60))
                    #expect(result.status != 0, "\(result.summary)")
                    #expect(result.stderrMessages.count == 1, "\(result.summary)")
                    #expect(result.stderrMessages.first?.contains(expected) == true, "\(result.summary)")
                }
            }
        }

        @Test("a cluster lost while running shows in /readyz, /v1/status and the log, with librdkafka's reason")
        func lostClusterIsReported() async throws {
            try await withTemporaryDirectory { scratch in
                // One run's embedded broker is the cluster of another run, until it is killed.
                let cluster = try Executable.start([
                    "run", "--data-dir", scratch.appendingPathComponent("cluster").path, "--listen", "127.0.0.1:0", "--partitions", "2",
                ], scratch: scratch)
                var client: RunningProgram?
                do {
                    let (broker, _) = try await RunMergeTests.addresses(of: cluster)
                    let started = try Executable.start([
                        "run", "--brokers", broker, "--data-dir", scratch.appendingPathComponent("client").path,
                        "--listen", "127.0.0.1:0", "--batch-interval-seconds", "3600",
                    ], scratch: scratch)
                    client = started
                    let server = try await EndToEnd.SecureStoreTests.started(started)
                    try await PostgresEndToEndTests.waitForAssignments(started, atLeast: 2)
                    #expect(try server.request("/readyz").status == 200)

                    cluster.signal(SIGKILL)
                    _ = try await cluster.waitForExit(timeout: .seconds(10))
                    let reported = try await eventualValue(within: .seconds(60), every: .milliseconds(200)) {
                        let components = try server.json("/v1/status")["components"] as? [[String: Any]] ?? []
                        return components.first { ($0["name"] as? String)?.hasSuffix("Kafka connection") == true }
                    }
                    let problem = try #require(reported, "no Kafka connection problem reported:\n\(started.stderr.suffix(2_000))")
                    #expect(problem["state"] as? String == "degraded")
                    #expect((problem["reason"] as? String)?.hasPrefix("Kafka: ") == true, "\(problem)")
                    #expect(try server.request("/readyz").status == 503)
                    #expect(started.stderr.contains("component degraded"), "\(started.stderr.suffix(2_000))")
                    let metrics = try server.request("/metrics").text
                    #expect(metrics.contains(#"counterpoint_component_up{component="\#(problem["name"] as? String ?? "")"} 0"#))
                    try await server.stop(timeout: .seconds(30))
                } catch {
                    await cluster.killIfRunning()
                    await client?.killIfRunning()
                    throw error
                }
            }
        }
    }
}
