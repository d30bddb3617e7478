import Foundation
import Testing

extension EndToEnd {
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
                #expect(result.stderr.split(separator: "\n").contains { CommandResult.isLogLine(String($0)) && $0.contains("SSL handshake failed") })
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
                ]
                for (arguments, expected) in attempts {
                    let result = try await runCounterpoint(arguments, scratch: scratch, timeout: .seconds(60))
                    #expect(result.status != 0, "\(result.summary)")
                    #expect(result.stderrMessages.count == 1, "\(result.summary)")
                    #expect(result.stderrMessages.first?.contains(expected) == true, "\(result.summary)")
                }
            }
        }
    }
}
