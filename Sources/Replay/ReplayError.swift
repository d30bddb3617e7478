import Kafka

/// The one error type of the Replay module; every message is one line, fit for a command's exit error.
public enum ReplayError: Error, CustomStringConvertible, Sendable {
    /// The given paths hold no log files.
    case noLogs(paths: [String])
    /// A log could not be found, opened or decoded; says which and why.
    case logs(String)
    /// Kafka refused a message or the producer failed.
    case kafka(KafkaError)
    /// A setting is out of range; names it.
    case invalidConfiguration(String)

    public var description: String {
        switch self {
        case let .noLogs(paths):
            return "no event logs found in \(paths.joined(separator: ", "))"
        case let .logs(message):
            return message
        case let .kafka(error):
            return "\(error)"
        case let .invalidConfiguration(message):
            return "invalid replay configuration: \(message)"
        }
    }
}
