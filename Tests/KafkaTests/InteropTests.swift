import Foundation
import Kafka
import KafkaTestSupport
import Runtime
import Testing

/// Other Kafka clients must be able to produce into the mock cluster that `counterpoint run` embeds.
@Suite("Messages from other Kafka clients")
struct InteropTests {
    static let kcat = "/usr/bin/kcat"
    static let python = "/usr/bin/python3"
    static let hasKcat = FileManager.default.isExecutableFile(atPath: kcat)
    static let hasKafkaPython = (try? run(python, ["-c", "import kafka"])) == 0

    @Test("messages produced by kcat arrive with their keys, values and tombstones",
          .enabled(if: hasKcat, "kcat is not installed at /usr/bin/kcat"))
    func kcatProducer() async throws {
        let cluster = try Fixtures.cluster(partitions: 1)
        // -K splits key from value at the tab; -Z turns an empty value into a tombstone.
        let lines = (0..<50).map { "track-\($0)\tplay-\($0)" } + ["track-gone\t"]
        let status = try Self.run(Self.kcat, ["-P", "-b", cluster.bootstrapServers, "-t", "plays", "-p", "0", "-K", "\t", "-Z"],
                                  input: lines.joined(separator: "\n") + "\n")
        try #require(status == 0)

        let received = try await consumeAll(51, from: cluster)
        let expected = (0..<50).map { ReceivedMessage(partition: 0, offset: Int64($0), key: Array("track-\($0)".utf8), value: Array("play-\($0)".utf8)) }
            + [ReceivedMessage(partition: 0, offset: 50, key: Array("track-gone".utf8), value: nil)]
        #expect(received == expected)
    }

    @Test("messages produced by kafka-python arrive with their keys, values and tombstones",
          .enabled(if: hasKafkaPython, "kafka-python is not installed for /usr/bin/python3"))
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
        try #require(try Self.run(Self.python, ["-c", script, cluster.bootstrapServers]) == 0)

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

    /// Runs a program to completion, feeding it `input`; returns its exit status.
    static func run(_ executable: String, _ arguments: [String], input: String = "") throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
