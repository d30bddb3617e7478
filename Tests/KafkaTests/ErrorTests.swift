import Kafka
import LogCapture
import Logging
import Patience
import Runtime
import Testing

@Suite("Errors say what went wrong", .onTestThreads)
struct ErrorTests {
    @Test("an unknown configuration property is named in the error")
    func unknownProperty() throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:9092", groupID: "g", topics: ["plays"])
        configuration.options.set("no.such.property", "1")
        let error = try #require(throws: KafkaError.self) {
            _ = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        }
        #expect(error.message.contains("No such configuration property: \"no.such.property\""))
        #expect(error.context.contains("setting no.such.property=1"))
        #expect(error.context.hasPrefix("creating consumer"))
    }

    @Test("an option that would commit offsets behind the program's back or change its group fails at start; the value the program sets passes",
          arguments: [("enable.auto.commit", "true", "false"), ("enable.auto.offset.store", "true", "false"),
                      ("enable.partition.eof", "true", "false"), ("group.id", "shared", "g"),
                      ("auto.offset.reset", "latest", "earliest")])
    func fixedProperties(name: String, value: String, fixed: String) throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:9092", groupID: "g", topics: ["plays"])
        configuration.connectTimeout = nil
        configuration.options.set(name, value)
        let error = try #require(throws: KafkaError.self) {
            _ = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
        }
        #expect(error.message.hasPrefix("\(name) must stay \(fixed): "))
        #expect(error.message.hasSuffix("; remove it from --kafka-option and --kafka-config"))
        #expect(error.context.hasPrefix("creating consumer"))

        configuration.options = KafkaClientOptions([(name, fixed)])
        _ = try KafkaConsumer(configuration: configuration, logger: Fixtures.logger)
    }

    @Test("an invalid configuration value is named in the error")
    func invalidValue() throws {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:9092")
        configuration.acks = "most"
        let error = try #require(throws: KafkaError.self) {
            _ = try KafkaProducer(configuration: configuration, logger: Fixtures.logger)
        }
        // librdkafka names the property by its canonical name; the context names it as set.
        #expect(error.message.contains("Invalid value for configuration property \"request.required.acks\""))
        #expect(error.description.hasPrefix("creating producer for 127.0.0.1:9092: setting acks=most"))
    }

    @Test("an unreachable broker fails the consumer and the producer within the connect timeout, saying why")
    func unreachableBroker() throws {
        let logs = CapturingLogHandler.Records()
        let logger = CapturingLogHandler.logger("kafka-tests", into: logs)
        // Nothing listens on port 1, so connecting is refused at once.
        var consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:1", groupID: "g", topics: ["plays"])
        consumerConfiguration.connectTimeout = .seconds(1)
        let consumerError = try #require(throws: KafkaError.self) {
            _ = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        }
        #expect(consumerError.message.hasPrefix("no Kafka broker reachable at 127.0.0.1:1 within 1.0 seconds"))
        #expect(consumerError.message.contains("Connection refused"))
        #expect(consumerError.name == "_TRANSPORT")
        #expect(consumerError.isRetriable)

        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1")
        producerConfiguration.connectTimeout = .seconds(1)
        let producerError = try #require(throws: KafkaError.self) {
            _ = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        }
        #expect(producerError.message.contains("Connection refused"))

        // librdkafka's own log lines reach swift-log, tagged with their facility.
        #expect(logs.value.contains { $0.metadata["kafka.facility"] != nil && $0.message.contains("Connection refused") })
    }
}
