@testable import Kafka
import Patience
import Testing

@Suite("A consumer's settings as librdkafka gets them", .onTestThreads)
struct ConsumerSettingsTests {
    private func property(_ name: String, of configuration: KafkaConsumerConfiguration) -> String? {
        configuration.librdkafkaProperties.last { $0.0 == name }?.1
    }

    @Test("the heartbeat is a third of the session timeout, at most 3 s, unless it is set")
    func heartbeatFollowsSessionTimeout() {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:9092", groupID: "g", topics: ["plays"])
        for (session, heartbeat) in [(10_000, "3000"), (45_000, "3000"), (4_000, "1333"), (1_000, "333")] {
            configuration.sessionTimeoutMilliseconds = session
            #expect(property("session.timeout.ms", of: configuration) == String(session))
            #expect(property("heartbeat.interval.ms", of: configuration) == heartbeat, "session \(session) ms")
        }
        configuration.heartbeatIntervalMilliseconds = 500
        #expect(property("heartbeat.interval.ms", of: configuration) == "500")
    }

    @Test("a seek waits as long as asked on every librdkafka, including those before 2.1.0 that counted the wait in microseconds")
    func seekTimeoutIsScaledForOldLibrdkafka() {
        #expect(RDKafkaClient.seekTimeoutArgument(.seconds(10), libraryVersion: 0x0200_02FF) == 10_000_000)
        #expect(RDKafkaClient.seekTimeoutArgument(.seconds(10), libraryVersion: 0x0201_00FF) == 10_000)
        #expect(RDKafkaClient.seekTimeoutArgument(.seconds(10), libraryVersion: 0x020F_00FF) == 10_000)
        #expect(RDKafkaClient.seekTimeoutArgument(.seconds(3_000), libraryVersion: 0x0200_02FF) == Int32.max)
        // The library the tests run on gets a wait of 10 s, whichever it is.
        let linked = RDKafkaClient.libraryVersion
        #expect(RDKafkaClient.seekTimeoutArgument(.seconds(10), libraryVersion: linked) == (linked < 0x0201_0000 ? 10_000_000 : 10_000))
    }
}
