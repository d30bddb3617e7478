import Foundation
import Kafka
import Logging
import Patience
import Runtime
import Testing

@Suite("Operator options reach librdkafka", .onTestThreads)
struct OptionsTests {
    @Test("an option is set after the program's own settings, so it overrides them")
    func optionsOverrideDefaults() throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        // Nothing listens on port 1: only the option's bootstrap.servers can deliver anything.
        var configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1")
        configuration.options.set("bootstrap.servers", cluster.bootstrapServers)
        configuration.connectTimeout = .seconds(10)
        let producer = try KafkaProducer(configuration: configuration, logger: Fixtures.logger)
        try producer.send(topic: "plays", key: Array("k".utf8), value: Array("v".utf8))
        try producer.flush(timeout: .seconds(10))
        #expect(producer.deliveryStatistics.delivered == 1)
    }

    @Test("an unknown property fails at start with librdkafka's message, and a secret value is never shown")
    func unknownSecretProperty() throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:9092", groupID: "g", topics: ["plays"])
        configuration.options.set("sasl.mechanisms", "PLAIN")
        configuration.options.set("no.such.password", "hunter2-in-an-error")
        let error = try #require(throws: KafkaError.self) {
            _ = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        }
        #expect(error.message.contains("No such configuration property: \"no.such.password\""))
        #expect(error.description.contains("setting no.such.password=***"))
        #expect(!error.description.contains("hunter2"))
        #expect(!error.description.contains("\n"))
    }

    @Test("an invalid value of a known property fails at start with librdkafka's message")
    func invalidValue() throws {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:9092")
        configuration.options.set("security.protocol", "carrier-pigeon")
        let error = try #require(throws: KafkaError.self) {
            _ = try KafkaProducer(configuration: configuration, logger: Fixtures.logger)
        }
        #expect(error.message.contains("Invalid value \"carrier-pigeon\" for configuration property \"security.protocol\""))
    }

    @Test("secret properties are the passwords, secrets, inline keys and the OAUTHBEARER configuration")
    func secretNames() {
        for name in ["sasl.password", "ssl.key.password", "ssl.keystore.password", "ssl.key.pem", "ssl_key",
                     "sasl.oauthbearer.client.secret", "sasl.oauthbearer.config", "SASL.PASSWORD"] {
            #expect(KafkaClientOptions.isSecret(name), "\(name)")
        }
        for name in ["sasl.username", "ssl.key.location", "ssl.ca.location", "security.protocol", "sasl.mechanisms",
                     "ssl.keystore.location", "bootstrap.servers"] {
            #expect(!KafkaClientOptions.isSecret(name), "\(name)")
        }
        let options = KafkaClientOptions([("sasl.username", "alice"), ("sasl.password", "s3cret")])
        #expect(options.description == "sasl.username=alice, sasl.password=***")
    }

    @Test("a kcat -F file: key=value lines, # comments and blank lines, whitespace trimmed, in order")
    func configFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kafka-\(UUID().uuidString).conf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        # a secured cluster
        security.protocol = sasl_ssl

          sasl.mechanisms=SCRAM-SHA-512
        sasl.password=p=a=s=s
        \tsasl.username=alice\r
        """.write(toFile: path, atomically: true, encoding: .utf8)
        var options = KafkaClientOptions()
        try options.add(fileAt: path)
        #expect(options.properties.map(\.name) == ["security.protocol", "sasl.mechanisms", "sasl.password", "sasl.username"])
        #expect(options.properties.map(\.value) == ["sasl_ssl", "SCRAM-SHA-512", "p=a=s=s", "alice"])
    }

    @Test("a line that is not key=value is an error naming the file and line, not its text")
    func badLine() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kafka-\(UUID().uuidString).conf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "sasl.username=alice\nhunter2-password-without-a-key\n".write(toFile: path, atomically: true, encoding: .utf8)
        var options = KafkaClientOptions()
        let error = try #require(throws: KafkaError.self) { try options.add(fileAt: path) }
        #expect(error.description.contains("\(path):2 is not key=value"))
        #expect(!error.description.contains("hunter2"))
        let missing = try #require(throws: KafkaError.self) { try options.add(fileAt: path + ".missing") }
        #expect(missing.description.contains("cannot read \(path).missing"))
    }

    @Test("TLS against a plaintext listener fails the consumer at start, saying the handshake failed")
    func tlsAgainstPlaintextAtStart() throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        var configuration = Fixtures.consumerConfiguration(cluster)
        configuration.options.set("security.protocol", "ssl")
        configuration.connectTimeout = .seconds(60)
        let started = ContinuousClock.now
        let error = try #require(throws: KafkaError.self) {
            _ = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        }
        #expect(error.message.contains("refused the connection"), "\(error)")
        #expect(error.message.contains("SSL handshake failed"), "\(error)")
        // Not retried in silence until the connect timeout.
        #expect(ContinuousClock.now - started < .seconds(50))
    }

    @Test("a refused connection while running is reported in the component health, with librdkafka's reason")
    func tlsAgainstPlaintextWhileRunning() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        let health = ComponentHealth(logger: Fixtures.logger)
        var configuration = Fixtures.consumerConfiguration(cluster)
        configuration.options.set("security.protocol", "ssl")
        configuration.connectTimeout = nil
        configuration.healthReport = KafkaHealthReport(health: health, component: "consumer Kafka connection")
        let consumer = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        let reported: @Sendable () -> ComponentReport? = { health.reports().first { $0.name == "consumer Kafka connection" } }
        // "All brokers down" may come first; the handshake's own reason replaces it when it comes.
        let refused: @Sendable () -> Bool = { reported()?.state.reason?.contains("SSL handshake failed") == true }
        try await Fixtures.run(consumer, handler: RecordingHandler(), until: Fixtures.stop(when: refused, orAfter: .seconds(60)))
        let report = try #require(reported())
        #expect(report.state.name == "degraded")
        #expect(report.state.reason?.contains("SSL handshake failed") == true, "\(report)")
        #expect(!health.allRunning)
    }
}
