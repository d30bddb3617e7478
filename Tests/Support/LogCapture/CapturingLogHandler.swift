import Logging
import Runtime

/// Keeps log records so a test can look at what a component said, and at which level.
public struct CapturingLogHandler: LogHandler {
    public struct Record: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
    }

    public typealias Records = Locked<[Record]>

    let records: Records
    public var logLevel = Logger.Level.trace
    public var metadata: Logger.Metadata = [:]

    public init(records: Records) { self.records = records }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        records.withLock { $0.append(Record(level: event.level, message: "\(event.message)", metadata: metadata.merging(event.metadata ?? [:]) { $1 })) }
    }

    /// A logger whose records go to `records`.
    public static func logger(_ label: String, into records: Records) -> Logger {
        Logger(label: label) { _ in CapturingLogHandler(records: records) }
    }
}

extension Locked where State == [CapturingLogHandler.Record] {
    public convenience init() { self.init([]) }

    /// The messages logged at `level`, in order.
    public func messages(at level: Logger.Level) -> [String] {
        value.filter { $0.level == level }.map(\.message)
    }
}
