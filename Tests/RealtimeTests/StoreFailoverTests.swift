import CounterStore
import Patience
import PostgresTestServer
@testable import Realtime
import Testing

/// The realtime consumer alone (no `run`, no other consumer) through a PostgreSQL failover to
/// an asynchronous standby that lacks its last commits: the store's offsets go back, and the
/// consumer must notice even when nothing new arrives to flush.
@Suite("The realtime consumer through a failover of its PostgreSQL store", .onTestThreads, .serialized)
struct StoreFailoverTests {
    @Test("a consumer caught up when its store fails over to a standby behind counts again what the standby lacks, with no new traffic")
    func caughtUpConsumerRecountsWhatThePromotedStandbyLacks() async throws {
        let (primary, standby) = try PostgresTestServer.startWithStandby()
        defer {
            standby.stop()
            primary.stop()
        }
        let database = PostgresTestServer.databaseName(of: try primary.makeDatabase())
        let store = StoreBackend.postgres(url: PostgresTestServer.multiHostURL([primary, standby], database: database,
                                                                               targetSessionAttrs: "read-write"))
        let cluster = try Fixtures.cluster(partitions: 2)
        let configuration = Fixtures.configuration(cluster, store: store)
        let all = Fixtures.events(1_000)

        // The first 600 plays are committed on the primary and replayed on the standby.
        try Fixtures.produce(Array(all.values[..<600]), to: cluster)
        let consumer = try await Fixtures.consumeUntilStored(600, configuration: configuration)
        defer { try? consumer.stop() }
        try #require(try StoreContents.storedMessages(store) == 600)
        try await standby.waitForReplay(of: try primary.currentWALPosition())
        // The last 400 reach the primary only; then the stream ends and the consumer is idle.
        try await standby.stopStreaming()
        try Fixtures.produce(Array(all.values[600...]), to: cluster)
        let onPrimary = try await eventually(within: .seconds(60)) { try StoreContents.storedMessages(store) == 1_000 }
        try #require(onPrimary, "the consumer did not commit the last 400 plays on the primary")

        // The primary is lost. The consumer's next flush fails and the store cannot be read
        // (the standby is not writable yet); only then is the standby promoted.
        try primary.stopImmediately()
        let failing = try await eventually(within: .seconds(60)) { consumer.status().flushFailure != nil }
        try #require(failing, "no flush failed with the primary stopped")
        // What the test is about: the standby lacks the last 400 plays' commits.
        let onStandby = try StoreContents.storedMessages(.postgres(url: standby.url(database: database)))
        try #require(onStandby == 600, "the standby holds \(onStandby) plays' offsets before its promotion, not 600")
        try standby.promote()

        // No new message arrives, yet the promoted standby ends with every play, once.
        let recounted = try await eventually(within: .seconds(60)) { (try? StoreContents.storedMessages(store)) == 1_000 }
        try consumer.stop()
        let contents = try StoreContents.read(store)
        #expect(recounted, "stored offsets on the promoted standby: \(contents.offsets)")
        #expect(contents.storedMessages == 1_000)
        #expect(mismatch(contents.counts, all.truth) == nil)
    }
}
