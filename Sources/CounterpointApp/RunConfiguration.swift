import Archive
import CounterStore
import Foundation
import Kafka
import Reader
import Realtime
import Runtime

/// Everything `counterpoint run` needs: the whole service on one machine.
public struct RunConfiguration: Sendable {
    /// The stores every component uses (the reader's included).
    public var store: StoreBackend
    /// Scratch space of the scheduled batch, beside the stores.
    public var dataDirectory: String
    /// The event logs the archiver writes and the scheduled batch reads.
    public var logDirectory: String
    /// Kafka bootstrap servers, HOST:PORT[,…]; nil starts an embedded broker (librdkafka's mock
    /// cluster) on loopback, with `topic` in `partitions` partitions.
    public var brokers: String?
    public var topic = "plays"
    /// librdkafka properties for every Kafka client of the process (`--kafka-option`,
    /// `--kafka-config`), the embedded broker's included.
    public var kafkaOptions = KafkaClientOptions()
    /// Partitions of the topic on the embedded broker.
    public var partitions = 16
    /// Faults to inject into the embedded broker, which then runs three brokers so that one can
    /// fail while the others serve (docs/faults.md); nil for none. Needs `brokers` nil.
    public var embeddedFaults: KafkaFaultSchedule?
    /// How often the realtime layer flushes counts and offsets.
    public var flushInterval: Duration = .milliseconds(250)
    /// How long the realtime consumer's group waits for a silent member before handing its
    /// partitions on.
    public var sessionTimeoutMilliseconds = 10_000
    /// How long an hour stays open for late events before the archiver closes it.
    public var allowedLateness: Duration = .seconds(600)
    /// How often the scheduled batch covers the closed hours that are new or changed.
    public var batchInterval: Duration = .seconds(300)
    /// Events of closed history (48 hours ending now) generated into `logDirectory` before
    /// anything starts, which the first batch run covers; nil for none.
    public var demoHistoryEvents: Int?
    /// Live synthetic plays produced per second; 0 for none.
    public var demoRate: Double = 0
    /// "Now", for every component of the run: the demo's history ends at its current hour, and
    /// the reader, consumer, archiver and scheduled batch take their times from it.
    public var clock = WallClock.system

    /// The demo's rate when none is given: its history at this rate (`demoHistoryEvents(rate:)`)
    /// is generated and covered by the first batch run in a few seconds.
    public static let defaultDemoRate = 5.0

    /// The events of 48 hours of demo history at `rate` events per second: history and live
    /// traffic at one rate, so that the first chart shows a day's rhythm running into the
    /// current hour, not a wall of near-zero hours beside one spike — but never more than
    /// `maximumDemoHistoryEvents`, whatever the rate.
    public static func demoHistoryEvents(rate: Double) -> Int {
        min(maximumDemoHistoryEvents, Int((rate * 3_600 * Double(demoHistoryHours)).rounded()))
    }

    /// What a person looking at the demo can take in, generated and covered by the first batch
    /// run in seconds, in about 200 MB of logs: a busier live rate (`--demo-rate 20000` would
    /// otherwise ask for 3.5 billion events, 700 GB) makes the last hours look busier, not
    /// the history longer. `--demo-events` may ask for more; the disk's free space still bounds it.
    public static let maximumDemoHistoryEvents = 1_000_000

    static let demoHistoryHours = 48
    /// The reader's listen address, threads, snapshot age and metrics exposition. Its store,
    /// live status and health are the run's own: `store`, the consumer's and archiver's
    /// status, and the application's `health`.
    public var reader: ReaderConfiguration

    /// The stores `store`, with the event logs in `<dataDirectory>/logs` unless told otherwise.
    public init(store: StoreBackend, dataDirectory: String, logDirectory: String? = nil) {
        self.store = store
        self.dataDirectory = dataDirectory
        self.logDirectory = logDirectory ?? (dataDirectory as NSString).appendingPathComponent("logs")
        self.reader = ReaderConfiguration(store: store)
    }
}
