import Foundation
import Kafka
import KafkaTestSupport
import Patience
import Runtime
import Testing

/// Other Kafka clients must be able to produce into the mock cluster that `counterpoint run` embeds.
@Suite("Messages from other Kafka clients", .onTestThreads)
struct InteropTests {
    @Test("messages produced by kcat arrive with their keys, values and tombstones",
          .enabled(if: OtherClients.hasKcat, "kcat is not installed at /usr/bin/kcat"))
    func kcatProducer() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        // -K splits key from value at the tab; -Z turns an empty value into a tombstone.
        let lines = (0..<50).map { "track-\($0)\tplay-\($0)" } + ["track-gone\t"]
        try await OtherClients.kcat(["-P", "-b", cluster.bootstrapServers, "-t", "plays", "-p", "0", "-K", "\t", "-Z"],
                                    input: lines.joined(separator: "\n") + "\n")

        let received = try await consumeAll(51, from: cluster)
        let expected = (0..<50).map { ReceivedMessage(partition: 0, offset: Int64($0), key: Array("track-\($0)".utf8), value: Array("play-\($0)".utf8)) }
            + [ReceivedMessage(partition: 0, offset: 50, key: Array("track-gone".utf8), value: nil)]
        #expect(received == expected)
    }

    @Test("messages produced by kafka-python arrive with their keys, values and tombstones",
          .enabled(if: OtherClients.hasKafkaPython, "kafka-python is not installed for /usr/bin/python3"))
    func kafkaPythonProducer() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        let script = """
            import sys
            from kafka import KafkaProducer
            producer = KafkaProducer(bootstrap_servers=sys.argv[1])
            for i in range(50):
                producer.send("plays", key=b"track-%d" % i, value=b"play-%d" % i, partition=0)
            producer.send("plays", key=b"track-gone", value=None, partition=0)
            producer.flush()
            producer.close()
            """
        try await OtherClients.python(script, [cluster.bootstrapServers])

        let received = try await consumeAll(51, from: cluster)
        let expected = (0..<50).map { ReceivedMessage(partition: 0, offset: Int64($0), key: Array("track-\($0)".utf8), value: Array("play-\($0)".utf8)) }
            + [ReceivedMessage(partition: 0, offset: 50, key: Array("track-gone".utf8), value: nil)]
        #expect(received == expected)
    }

    private func consumeAll(_ count: Int, from cluster: KafkaMockCluster) async throws -> [ReceivedMessage] {
        let consumer = try KafkaConsumer(configuration: Fixtures.consumerConfiguration(cluster), logger: Fixtures.logger)
        let handler = RecordingHandler()
        try await Fixtures.run(consumer, handler: handler, until: Fixtures.stop(when: { handler.count >= count }))
        return handler.messages.value
    }
}
